import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassTransport

/// Two senders (or one misbehaving) alternating SSRCs on one port, a stray packet, a restarted
/// sender. The sequence tracker counts each change as what it is, an SSRC change (RFC 3550 §8.2),
/// never as reordering, loss or duplication; in front of it the receiver's probation (RFC 3550
/// §A.1) keeps the established sender while it still sends (another takes over only after it has
/// been silent for 100 ms), so a second sender's packets are dropped and counted instead of
/// restarting the feed at every change.
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

    /// Pushes `packets` through `r` (packet k `gap(k)` µs after the one before; 1 ms unless
    /// said), then ends the input; counts units and restarts and keeps the units' third byte (the
    /// low byte of the sequence number each was sent with).
    static func run(_ r: inout RTPReceiver, _ packets: [(ssrc: UInt32, seq: UInt16)],
                    gap: (Int) -> UInt64 = { _ in 1_000 }) -> (units: [UInt8], restarts: Int) {
        var units: [UInt8] = [], restarts = 0
        func take(_ e: RTPReceiver.Event) {
            if case .unit(let u) = e { units.append(u.bytes[2]) }
            if case .restart = e { restarts += 1 }
        }
        var now: UInt64 = 1_000_000
        for (k, p) in packets.enumerated() {
            now += gap(k)
            r.tick(nowMicros: now, emit: take)
            r.push(Self.packet(ssrc: p.ssrc, seq: p.seq), arrivalMicros: now, emit: take)
        }
        r.finish(emit: take)
        return (units, restarts)
    }

    /// Through the whole RTP receiver, with and without a jitter buffer: the first sender keeps
    /// the feed, every one of its packets comes out, and each of the other sender's is counted
    /// as stray; nothing restarts, nothing is reordered (a jitter buffer used to drop what it
    /// held at each change, uncounted).
    @Test(arguments: [0, 20_000] as [UInt64])
    func theReceiverKeepsTheFirstSenderAndCountsTheOther(windowMicros: UInt64) {
        var r = RTPReceiver(codec: .h264, payloadType: 96, reorderWindowMicros: windowMicros)
        let sent = Self.alternating(40)
        let (units, restarts) = Self.run(&r, sent)
        let c = r.counters
        #expect(units == sent.filter { $0.ssrc == Self.a }.map { UInt8($0.seq & 0xFF) }, "sender A's packets, in order")
        #expect(c.strayPackets == 20, "each of B's packets counted")
        #expect(c.sequence.ssrcChanges == 0)
        #expect(restarts == 0)
        #expect(c.sequence.reordered == 0, "a flap is not reordering")
        #expect(c.sequence.lost == 0)
        #expect(c.sequence.duplicates == 0)
    }

    @Test func aStrayPacketIsDroppedAndCountedNeverARestart() {
        var r = RTPReceiver(codec: .h264, payloadType: 96)
        let a = (100..<110 as Range<UInt16>).map { (ssrc: Self.a, seq: $0) }
        let (units, restarts) = Self.run(&r, Array(a[..<5]) + [(ssrc: 0xCCCC_0003, seq: 7)] + Array(a[5...]))
        #expect(units == a.map { UInt8($0.seq & 0xFF) })
        #expect(restarts == 0)
        #expect(r.counters.strayPackets == 1)
        #expect(r.counters.sequence == SequenceTracker.Counters(), "no loss, reordering or SSRC change either")
    }

    /// A second real sender: each picture a burst of packets, interleaved with the first's. Two
    /// packets in a row of the second used to be enough to take the feed (and the first took it
    /// back the same way, every picture).
    @Test func burstsOfASecondSenderNeverTakeTheFeed() {
        var r = RTPReceiver(codec: .h264, payloadType: 96)
        var sent: [(ssrc: UInt32, seq: UInt16)] = []
        for picture in 0..<20 {
            for k in 0..<5 { sent.append((Self.a, UInt16(100 + picture * 5 + k))) }
            for k in 0..<5 { sent.append((Self.b, UInt16(7_000 + picture * 5 + k))) }
        }
        // 1 ms between a burst's packets, 16 ms between bursts: both senders at 30 pictures a second.
        let (units, restarts) = Self.run(&r, sent) { $0 % 5 == 0 ? 16_000 : 1_000 }
        #expect(units == sent.filter { $0.ssrc == Self.a }.map { UInt8($0.seq & 0xFF) })
        #expect(restarts == 0 && r.counters.sequence.ssrcChanges == 0)
        #expect(r.counters.strayPackets == 100)
    }

    /// The old sender stops; a new SSRC takes over once the old one has been silent for 100 ms.
    /// What it sent meanwhile, held, goes on too (its first packets usually carry the parameter
    /// sets).
    @Test func aRestartedSenderTakesOverOnceTheOldIsSilentAndLosesNone() {
        var r = RTPReceiver(codec: .h264, payloadType: 96)
        let old = (100..<110 as Range<UInt16>).map { (ssrc: Self.a, seq: $0) }
        let new = (40_000..<40_010 as Range<UInt16>).map { (ssrc: Self.b, seq: $0) }
        let (units, restarts) = Self.run(&r, old + new) { $0 >= old.count ? 33_000 : 1_000 }   // the new one at 30 fps
        #expect(units == (old + new).map { UInt8($0.seq & 0xFF) })
        #expect(restarts == 1)
        #expect(r.counters.sequence.ssrcChanges == 1)
        #expect(r.counters.strayPackets == 0)
    }

    /// A new sender whose packets arrive pairwise swapped still takes over, and the jitter buffer
    /// puts them back in order (probation used to demand two packets in sequence, which never came).
    @Test func aRestartedSenderOnAReorderingLinkTakesOverAndIsPutInOrder() {
        var r = RTPReceiver(codec: .h264, payloadType: 96, reorderWindowMicros: 40_000)
        let old = (100..<110 as Range<UInt16>).map { (ssrc: Self.a, seq: $0) }
        let swapped = stride(from: 40_000, to: 40_020, by: 2).flatMap { [(ssrc: Self.b, seq: UInt16($0 + 1)), (ssrc: Self.b, seq: UInt16($0))] }
        let (units, restarts) = Self.run(&r, old + swapped) { $0 >= old.count ? 16_000 : 1_000 }
        #expect(restarts == 1)
        #expect(units == old.map { UInt8($0.seq & 0xFF) } + (40_000..<40_020).map { UInt8($0 & 0xFF) }, "\(units)")
        #expect(r.counters.strayPackets == 0)
    }

    @Test func probationWaitsForTheEstablishedSenderToFallSilent() {
        var p = SSRCProbation<Int>()
        #expect(p.admit(1, ssrc: 1, arrivalMicros: 0) == [1], "the first sender is established at once")
        #expect(p.admit(2, ssrc: 2, arrivalMicros: 1_000) == [])
        #expect(p.admit(3, ssrc: 2, arrivalMicros: 50_000) == [], "the first one was heard 50 ms ago")
        #expect(p.admit(4, ssrc: 1, arrivalMicros: 60_000) == [4], "the established sender still sends")
        #expect(p.admit(5, ssrc: 2, arrivalMicros: 120_000) == [])
        #expect(p.admit(6, ssrc: 2, arrivalMicros: 170_000) == [2, 3, 5, 6], "110 ms of silence: taken over, the last 200 ms held")
        #expect(p.admit(7, ssrc: 1, arrivalMicros: 180_000) == [], "now the old one is on probation")
        #expect(p.admit(8, ssrc: 3, arrivalMicros: 181_000) == [], "a third SSRC: the held packet of the second is dropped")
        p.finish()
        #expect((p.onProbation, p.strayPackets) == (0, 2))
    }

    @Test func probationHoldsABoundedNumberOfPackets() {
        var p = SSRCProbation<Int>()
        _ = p.admit(0, ssrc: 1, arrivalMicros: 0)
        for k in 1...10_000 { _ = p.admit(k, ssrc: 2, arrivalMicros: 10) }
        #expect(p.onProbation == SSRCProbation<Int>.maxHeld)
        #expect(p.strayPackets == 10_000 - SSRCProbation<Int>.maxHeld)
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
        now += 150_000                                             // A silent for 150 ms:
        push(Self.b, 501)                                          // B takes over
        r.tick(nowMicros: now + 60_000) { e in if case .unit(let u) = e { seqOut.append(u.bytes[2]) } }
        #expect(seqOut == [10, 11, 12, 13, UInt8(500 & 0xFF), UInt8(501 & 0xFF)])
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
        m.setTransport(.rtp)
        m.publish(group: .depacketizer, [.rtpPackets: 40, .ssrcChanges: 39, .packetsReordered: 0, .strayPackets: 7])
        let s = FeedSummary(source: "udp://:5600", datagramSource: true, snapshot: m.snapshot(), durationSeconds: 1)
        #expect(s.ssrcChanges == 39)
        #expect(s.datagramsReordered == 0)
        #expect(s.line.contains("RTP: 0 lost, 0 reordered, 0 duplicated, 39 SSRC changes, 7 packets of another sender dropped"))
        #expect(LinkStatistics.lines(s).contains { $0.contains("SSRC changes 39") && $0.contains("another sender's packets dropped 7") })
        let quiet = FeedSummary(source: "udp://:5600", datagramSource: true, snapshot: MetricsRegistry().snapshot(), durationSeconds: 1)
        #expect(!quiet.line.contains("SSRC"))
    }
}
