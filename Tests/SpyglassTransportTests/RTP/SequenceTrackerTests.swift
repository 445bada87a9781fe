import Testing
@testable import SpyglassTransport

/// ``SequenceTracker``: RTP sequence bookkeeping (RFC 3550 §A.1), one sequence number at a time,
/// no sockets. "Expected" is the number after the last accepted one.
@Suite struct SequenceTrackerTests {
    private let ssrc: UInt32 = 0x1234_5678

    private func feed(_ t: inout SequenceTracker, _ seqs: [UInt16], ssrc: UInt32? = nil) -> [SequenceTracker.Verdict] {
        seqs.map { t.observe(ssrc: ssrc ?? self.ssrc, sequenceNumber: $0) }
    }

    @Test func inOrderPacketsAreAcceptedWithNoGapAndNothingIsCounted() {
        var t = SequenceTracker()
        #expect(feed(&t, [100, 101, 102, 103]) == Array(repeating: .accept(gap: 0), count: 4))
        #expect(t.counters == SequenceTracker.Counters())
    }

    @Test func aGapIsAcceptedWithItsSizeAndCountedAsLost() {
        var t = SequenceTracker()
        // 101 and 102 never come.
        #expect(feed(&t, [100, 103, 104]) == [.accept(gap: 0), .accept(gap: 2), .accept(gap: 0)])
        #expect(t.counters == SequenceTracker.Counters(lost: 2))
    }

    @Test func aDuplicateIsDroppedAndCountedAsADuplicate() {
        var t = SequenceTracker()
        // 101 twice in a row, then 100 again after 102.
        #expect(feed(&t, [100, 101, 101, 102, 100]) == [.accept(gap: 0), .accept(gap: 0), .drop, .accept(gap: 0), .drop])
        #expect(t.counters == SequenceTracker.Counters(duplicates: 2))
    }

    /// RFC 3550 §A.3: a packet that arrives late was received after all, so it is not lost.
    @Test func aLatePacketIsDroppedCountedAsReorderedAndNoLongerCountedLost() {
        var t = SequenceTracker()
        #expect(feed(&t, [100, 102]) == [.accept(gap: 0), .accept(gap: 1)])
        #expect(t.counters.lost == 1)
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 101) == .drop)
        #expect(t.counters == SequenceTracker.Counters(reordered: 1))
        // The late packet did not move the expected number back: 103 is next, in order.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 103) == .accept(gap: 0))
    }

    @Test func sequenceNumbersWrapFrom65535To0() {
        var t = SequenceTracker()
        #expect(feed(&t, [65_534, 65_535, 0, 1]) == Array(repeating: .accept(gap: 0), count: 4))
        #expect(t.counters == SequenceTracker.Counters())
    }

    @Test func aGapAcrossTheWrapCountsThePacketsOnBothSides() {
        var t = SequenceTracker()
        // 65535 and 0 are missing between 65534 and 1.
        #expect(feed(&t, [65_534, 1]) == [.accept(gap: 0), .accept(gap: 2)])
        #expect(t.counters.lost == 2)
        // 65535 arrives late, across the wrap: reordered, not a restart.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 65_535) == .drop)
        #expect(t.counters == SequenceTracker.Counters(lost: 1, reordered: 1))
    }

    @Test func aNewSSRCIsARestartAndItsStreamIsThenFollowed() {
        var t = SequenceTracker()
        _ = feed(&t, [100, 101])
        #expect(t.observe(ssrc: 0xBBBB, sequenceNumber: 40_000) == .restart)
        #expect(t.counters == SequenceTracker.Counters(resets: 1, ssrcChanges: 1))
        // The new sender's numbers are followed, not measured against the old one's.
        #expect(feed(&t, [40_001, 40_002], ssrc: 0xBBBB) == [.accept(gap: 0), .accept(gap: 0)])
        #expect(t.counters == SequenceTracker.Counters(resets: 1, ssrcChanges: 1))
    }

    /// Same SSRC, sequence reset: a sender that restarted without changing its SSRC.
    @Test func aJumpBeyondRestartJumpIsARestartNotLoss() {
        var t = SequenceTracker()
        _ = feed(&t, [100])
        // Expected 101; 101 + 3001 is one more than the default restartJump (3000) ahead.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 101 + 3001) == .restart)
        #expect(t.counters == SequenceTracker.Counters(resets: 1))
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 101 + 3002) == .accept(gap: 0))
        // And backwards: far behind the expected number.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 5) == .restart)
        #expect(t.counters == SequenceTracker.Counters(resets: 2))
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 6) == .accept(gap: 0))
    }

    @Test func aJumpOfExactlyRestartJumpIsStillLoss() {
        var t = SequenceTracker(restartJump: 10)
        _ = feed(&t, [100])
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 101 + 10) == .accept(gap: 10))
        #expect(t.counters == SequenceTracker.Counters(lost: 10))
        // 10 behind the expected number (112): late, not a restart.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 102) == .drop)
        #expect(t.counters.resets == 0)
        // 11 ahead: a restart.
        #expect(t.observe(ssrc: ssrc, sequenceNumber: 112 + 11) == .restart)
        #expect(t.counters.resets == 1)
    }

    /// A late packet that the network also duplicated: one reordered packet and one duplicate,
    /// and the packets really lost stay counted.
    @Test
    func aLatePacketArrivingTwiceIsOneReorderedAndOneDuplicate() {
        var t = SequenceTracker()
        // 101 late, 103 and 104 really lost, then 101 a second time.
        _ = feed(&t, [100, 102, 105, 101, 101])
        #expect(t.counters == SequenceTracker.Counters(lost: 2, reordered: 1, duplicates: 1))
    }
}
