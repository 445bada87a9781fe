// libFuzzer target: RTCP (RFC 3550 §6). Input: one compound packet. Parses its parts, takes it
// into an RTCP session (sender clock, LSR echo), maps RTP timestamps through each sender report,
// makes the receiver report due after it, and pushes the packet through the RTP depacketizer
// (where it must be one counted packet, never a crash).
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTCP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    var session = RTCPSession(ssrc: 1)
    let parts = session.receive(raw, arrivalMicros: 1_000)
    if (parts == nil) != (session.counts.malformed == 1) { fatalError("a malformed packet not counted") }
    for case .senderReport(let sr) in parts ?? [] {
        _ = session.wallMicros(rtpTimestamp: sr.rtpTimestamp &+ 90_000, ssrc: sr.ssrc)
        _ = session.wallMicros(rtpTimestamp: sr.rtpTimestamp &- 0x8000_0000, ssrc: sr.ssrc)
        _ = SenderClock.unixMicros(ntp: sr.ntpTimestamp)
    }
    session.observeRTP(raw, arrivalMicros: 2_000)
    _ = session.outgoing(nowMicros: 10_000_000)
    var d = RTPStreamDepacketizer()
    if RTCPPacket.looksLikeRTCP(raw) {
        d.push(raw, arrivalMicros: 1, truncated: false) { _ in }
        if d.counts[.rtcpPackets] != 1 { fatalError("an RTCP packet not counted") }
    }
    return 0
}
