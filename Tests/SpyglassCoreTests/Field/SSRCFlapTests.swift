import Testing
@testable import SpyglassCore

/// Two senders (or one misbehaving) alternating SSRCs on one port: each change is counted as
/// what it is, an SSRC change (RFC 3550 §8.2), never as reordering, loss or duplication.
@Suite struct SSRCFlapTests {
    static let a: UInt32 = 0xAAAA_0001
    static let b: UInt32 = 0xBBBB_0002

    /// Sender A at 1000, 1001, …; sender B one behind it, at 999, 1000, … (so that, were the
    /// SSRC ignored, each B packet would read as late or as a duplicate of A's), alternating
    /// packet by packet: `count` packets in all.
    static func alternating(_ count: Int) -> [(ssrc: UInt32, seq: UInt16)] {
        (0..<count).map { (i: Int) -> (ssrc: UInt32, seq: UInt16) in
            let n = UInt16(i / 2)
            return i % 2 == 0 ? (ssrc: a, seq: 1000 + n) : (ssrc: b, seq: 999 + n)
        }
    }

    /// One RTP packet (RFC 3550 §5.1 header, 12 bytes) with a one-byte-header H.264 slice as payload
    /// (RFC 6184 §5.6 single NAL unit), marker set: one access unit per packet.
    static func packet(ssrc: UInt32, seq: UInt16) -> [UInt8] {
        RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: seq, timestamp: UInt32(seq) &* 3000, ssrc: ssrc,
                        payload: [0x41, 0x9A, UInt8(seq & 0xFF), 0x01])
    }

    @Test func theTrackerCountsEachChangeAsAnSSRCChangeAndNothingElse() {
        var t = SequenceTracker()
        let verdicts = Self.alternating(40).map { t.observe(ssrc: $0.ssrc, sequenceNumber: $0.seq) }
        #expect(verdicts.first == .accept(gap: 0))
        #expect(verdicts.dropFirst().allSatisfy { $0 == .restart }, "each change starts the other sender over")
        #expect(t.counters.ssrcChanges == 39)
        #expect(t.counters.reordered == 0)
        #expect(t.counters.lost == 0)
        #expect(t.counters.duplicates == 0)
    }

    @Test func oneSenderRestartIsOneSSRCChange() {
        var t = SequenceTracker()
        for s in 100..<110 as Range<UInt16> { _ = t.observe(ssrc: Self.a, sequenceNumber: s) }
        for s in 40_000..<40_010 as Range<UInt16> { _ = t.observe(ssrc: Self.b, sequenceNumber: s) }
        #expect(t.counters.ssrcChanges == 1)
        #expect(t.counters.resets == 1)
        #expect(t.counters.reordered == 0 && t.counters.lost == 0)
    }

    /// The sequence reset of one SSRC (RFC 3550 §A.1) is a restart but no SSRC change.
    @Test func aSequenceJumpIsARestartButNoSSRCChange() {
        var t = SequenceTracker()
        _ = t.observe(ssrc: Self.a, sequenceNumber: 100)
        #expect(t.observe(ssrc: Self.a, sequenceNumber: 20_000) == .restart)
        #expect(t.counters.ssrcChanges == 0)
        #expect(t.counters.resets == 1)
    }

    /// Through the whole RTP receiver, with and without a jitter buffer: the changes are counted,
    /// nothing is reordered, and every packet's unit comes out (a jitter buffer used to drop what
    /// it held at each change, uncounted).
    @Test(arguments: [0, 20_000] as [UInt64])
    func theReceiverCountsFlapsAndPassesEveryPacketOn(windowMicros: UInt64) {
        var r = RTPReceiver(codec: .h264, payloadType: 96, reorderWindowMicros: windowMicros)
        var units = 0, restarts = 0
        var now: UInt64 = 1_000_000
        let sent = Self.alternating(40)
        for p in sent {
            now += 1_000
            r.push(Self.packet(ssrc: p.ssrc, seq: p.seq), arrivalMicros: now) { e in
                if case .unit = e { units += 1 }
                if case .restart = e { restarts += 1 }
            }
        }
        // The jitter buffer gives up its last packet once the window has passed.
        r.tick(nowMicros: now + windowMicros + 1) { e in
            if case .unit = e { units += 1 }
            if case .restart = e { restarts += 1 }
        }
        let c = r.counters
        #expect(c.sequence.ssrcChanges == 39)
        #expect(c.sequence.reordered == 0, "a flap is not reordering")
        #expect(c.sequence.lost == 0)
        #expect(c.sequence.duplicates == 0)
        #expect(restarts == 39)
        #expect(units == sent.count, "no packet dropped uncounted")
    }

    /// With a jitter buffer, sender A's packets held out of order when B takes over go on in
    /// sequence order before B's, and the one put back in order is counted as reordered (it was).
    @Test func heldPacketsOfTheOldSenderGoOnInOrderAtTheChange() {
        var r = RTPReceiver(codec: .h264, payloadType: 96, reorderWindowMicros: 50_000)
        var seqOut: [UInt8] = []
        var now: UInt64 = 1_000_000
        func push(_ ssrc: UInt32, _ seq: UInt16) {
            now += 1_000
            r.push(Self.packet(ssrc: ssrc, seq: seq), arrivalMicros: now) { e in
                if case .unit(let u) = e { seqOut.append(u.bytes[2]) }
            }
        }
        for s in [10, 12, 11, 13] as [UInt16] { push(Self.a, s) }   // A, one packet out of order, all held
        push(Self.b, 500)
        r.tick(nowMicros: now + 60_000) { e in if case .unit(let u) = e { seqOut.append(u.bytes[2]) } }
        #expect(seqOut == [10, 11, 12, 13, UInt8(500 & 0xFF)])
        #expect(r.counters.sequence.ssrcChanges == 1)
        #expect(r.counters.sequence.lost == 0)
    }

    @Test func theDrainOfAReorderBufferIsInSequenceOrderAcrossTheWrap() {
        var b = ReorderBuffer(windowMicros: 1_000_000)
        for (i, s) in ([65_534, 1, 65_535, 0] as [UInt16]).enumerated() {
            let p = try! RTPPacket(datagram: Self.packet(ssrc: Self.a, seq: s)[...])
            #expect(b.push(p, arrivalMicros: UInt64(i)).isEmpty)
        }
        #expect(b.drain().map(\.0.sequenceNumber) == [65_534, 65_535, 0, 1])
        #expect(b.drain().isEmpty, "then it is empty")
    }

    /// The summary line and the `s` overlay say it, from the registry the RTP stage publishes to.
    @Test @MainActor func theSummaryAndTheOverlayShowSSRCChanges() {
        let m = MetricsRegistry()
        m.setTransport("rtp")
        m.publish(group: "depacketizer", [.rtpPackets: 40, .ssrcChanges: 39, .packetsReordered: 0])
        let s = FeedSummary(source: "udp://:5600", datagramSource: true, snapshot: m.snapshot(), durationSeconds: 1)
        #expect(s.ssrcChanges == 39)
        #expect(s.datagramsReordered == 0)
        #expect(s.line.contains("RTP: 0 lost, 0 reordered, 0 duplicated, 39 SSRC changes"))
        #expect(FeedWindow.statsLines(s).contains { $0.contains("SSRC changes 39") })
        let quiet = FeedSummary(source: "udp://:5600", datagramSource: true, snapshot: MetricsRegistry().snapshot(), durationSeconds: 1)
        #expect(!quiet.line.contains("SSRC"))
    }
}
