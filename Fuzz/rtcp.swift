// libFuzzer target: RTCP (RFC 3550 §6). Input: one compound packet. Parses its sender reports,
// maps RTP timestamps through each, builds a receiver report after them, and pushes the packet
// through the RTP depacketizer (where it must be one counted packet, never a crash).
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTCP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    var clock = SenderClock()
    var reporter = ReceiverReporter(ssrc: 1)
    for sr in (try? RTCPPacket.senderReports(in: raw)) ?? [] {
        clock.take(sr)
        reporter.observe(sr, arrivalMicros: 1_000)
        _ = clock.wallMicros(rtpTimestamp: sr.rtpTimestamp &+ 90_000, ssrc: sr.ssrc)
        _ = clock.wallMicros(rtpTimestamp: sr.rtpTimestamp &- 0x8000_0000, ssrc: sr.ssrc)
        _ = SenderClock.unixMicros(ntp: sr.ntpTimestamp)
    }
    reporter.observeRTP(raw, arrivalMicros: 2_000)
    _ = reporter.reportIfDue(nowMicros: 10_000_000)
    var d = RTPStreamDepacketizer()
    if RTCPPacket.looksLikeRTCP(raw) {
        d.push(raw, arrivalMicros: 1, truncated: false) { _ in }
        if d.counts[.rtcpPackets] != 1 { fatalError("an RTCP packet not counted") }
    }
    return 0
}
