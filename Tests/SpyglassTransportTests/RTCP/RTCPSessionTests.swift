import Testing
@testable import SpyglassTransport

/// ``RTCPSession``: each compound packet parsed once into its parts; sender reports set the
/// clock and the LSR echo of the report made for the sender; malformed packets are counted drops.
@Suite struct RTCPSessionTests {
    static func word(_ w: UInt32) -> [UInt8] { [UInt8(w >> 24), UInt8((w >> 16) & 0xFF), UInt8((w >> 8) & 0xFF), UInt8(w & 0xFF)] }

    /// SR (RFC 3550 §6.4.1) + SDES + BYE (§6.6) + a PLI (RFC 4585 §6.3.1) in one compound packet.
    static func compound(ssrc: UInt32, ntp: UInt64, rtp: UInt32) -> [UInt8] {
        let sr: [UInt8] = [0x80, 200, 0, 6] + word(ssrc) + word(UInt32(ntp >> 32)) + word(UInt32(ntp & 0xFFFF_FFFF)) + word(rtp) + word(10) + word(1000)
        let sdes: [UInt8] = [0x81, 202, 0, 2] + word(ssrc) + [1, 2, 0x61, 0x62]
        let bye: [UInt8] = [0x81, 203, 0, 1] + word(ssrc)
        let pli: [UInt8] = [0x81, 206, 0, 2] + word(ssrc) + word(0x1234)
        return sr + sdes + bye + pli
    }

    @Test func everyPartOfACompoundPacketIsNamed() throws {
        let ntp = SenderClock.ntp(unixMicros: 1_764_600_000_000_000)
        let parts = try Self.compound(ssrc: 9, ntp: ntp, rtp: 4500).withUnsafeBytes { try RTCPPacket.parts(of: $0) }
        #expect(parts == [.senderReport(.init(ssrc: 9, ntpTimestamp: ntp, rtpTimestamp: 4500, packetCount: 10, octetCount: 1000)),
                          .sourceDescription, .goodbye(ssrcs: [9]), .feedback(packetType: 206, format: 1)])
    }

    @Test func aSenderReportSetsTheClockAndIsEchoedInTheNextReceiverReport() throws {
        var session = RTCPSession(ssrc: 0xABCD)
        let unix: UInt64 = 1_764_600_000_000_000
        let ntp = SenderClock.ntp(unixMicros: unix)
        let rtpPacket = RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 9, payload: [0x41])
        rtpPacket.withUnsafeBytes { session.observeRTP($0, arrivalMicros: 1_000_000) }
        Self.compound(ssrc: 9, ntp: ntp, rtp: 0).withUnsafeBytes { _ = session.receive($0, arrivalMicros: 1_000_000) }
        #expect(session.counts == { var c = RTCPSession.Counts(); c.packets = 1; c.senderReports = 1; return c }())
        #expect(session.wallMicros(rtpTimestamp: 90_000, ssrc: 9) == unix + 1_000_000, "one second of 90 kHz ticks later")
        #expect(session.outgoing(nowMicros: 1_000_001) == nil, "not due yet")
        let due = session.outgoing(nowMicros: 2_000_000)?.bytes
        let report = try #require(due)
        #expect(report[1] == RTCPPacket.receiverReportType && Array(report[4..<8]) == Self.word(0xABCD))
        let lsr = Array(report[24..<28])
        #expect(lsr == Self.word(UInt32(truncatingIfNeeded: ntp >> 16)), "LSR: the middle 32 bits of the report's NTP time")
    }

    @Test func aMalformedPacketIsOneCountedDrop() {
        var session = RTCPSession()
        let cut: [UInt8] = [0x80, 200, 0, 6, 0, 0, 0, 9]   // an SR whose length runs past the end
        let parts = cut.withUnsafeBytes { session.receive($0, arrivalMicros: 1) }
        #expect(parts == nil && session.counts.packets == 1 && session.counts.malformed == 1 && session.clock.latest == nil)
    }

    /// A sender that went away gets no more reports after 5 intervals (RFC 3550 §6.3.5), and
    /// gets them again when it comes back.
    @Test func aSilentSenderGetsNoMoreReports() {
        var session = RTCPSession(ssrc: 1)
        func rtp(_ seq: UInt16, at t: UInt64) {
            RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: seq, timestamp: 0, ssrc: 9, payload: [0x41])
                .withUnsafeBytes { session.observeRTP($0, arrivalMicros: t) }
        }
        rtp(1, at: 1_000_000)
        #expect(session.outgoing(nowMicros: 2_000_000) != nil, "the first report")
        #expect(session.outgoing(nowMicros: 4_000_000) != nil, "still within 5 intervals of the last packet")
        #expect(session.outgoing(nowMicros: 12_000_000) == nil, "silent for 11 s: timed out")
        rtp(2, at: 20_000_000)
        #expect(session.outgoing(nowMicros: 20_000_001) != nil, "back: reports again")
    }
}
