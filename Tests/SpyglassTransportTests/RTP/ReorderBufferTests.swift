import Testing
@testable import SpyglassTransport

/// ``ReorderBuffer``, the RTP jitter buffer: packets and arrival times in, packets in sequence
/// order out, no sockets. Times are µs on a made-up clock.
@Suite struct ReorderBufferTests {
    /// An RTP packet (RFC 3550 §5.1) with sequence number `seq` and a one-byte-ish payload.
    private func packet(_ seq: UInt16) -> RTPPacket {
        let d = RTPPacket.build(marker: false, payloadType: 96, sequenceNumber: seq, timestamp: 0, ssrc: 7,
                                payload: [0x41, UInt8(truncatingIfNeeded: seq)])
        return try! RTPPacket(datagram: d[...])
    }

    private func seqs(_ out: [(RTPPacket, UInt64)]) -> [UInt16] { out.map(\.0.sequenceNumber) }
    private func times(_ out: [(RTPPacket, UInt64)]) -> [UInt64] { out.map(\.1) }

    private let window: UInt64 = 20_000

    /// A buffer whose stream has started: packet 1 came at t = 0 and was released, 2 is expected.
    private func started(capacity: Int = 512) -> ReorderBuffer {
        var b = ReorderBuffer(windowMicros: window, capacity: capacity)
        _ = b.push(packet(1), arrivalMicros: 0)
        let first = b.release(now: window)
        precondition(seqs(first) == [1])
        return b
    }

    @Test func windowZeroPassesEveryPacketAtOnceInArrivalOrder() {
        var b = ReorderBuffer(windowMicros: 0)
        #expect(seqs(b.push(packet(1), arrivalMicros: 10)) == [1])
        #expect(seqs(b.push(packet(3), arrivalMicros: 20)) == [3])
        let late = b.push(packet(2), arrivalMicros: 30)
        #expect(seqs(late) == [2])
        #expect(times(late) == [30])
        #expect(b.release(now: 1_000_000).isEmpty, "nothing is ever held")
        #expect(b.putBackInOrder == 0)
    }

    /// The first packets of a stream may be out of order themselves: held one window, then
    /// released from the lowest sequence number, each with its own arrival time.
    @Test func theFirstPacketsAreHeldOneWindowThenReleasedFromTheLowest() {
        var b = ReorderBuffer(windowMicros: window)
        #expect(b.push(packet(5), arrivalMicros: 1_000).isEmpty)
        #expect(b.push(packet(4), arrivalMicros: 2_000).isEmpty)
        #expect(b.release(now: 1_000 + window - 1).isEmpty)
        let out = b.release(now: 1_000 + window)
        #expect(seqs(out) == [4, 5])
        #expect(times(out) == [2_000, 1_000])
    }

    @Test func onceStartedAnInOrderPacketPassesAtOnce() {
        var b = started()
        let out = b.push(packet(2), arrivalMicros: 100_000)
        #expect(seqs(out) == [2])
        #expect(times(out) == [100_000])
        #expect(b.putBackInOrder == 0)
    }

    /// Packet 2 never comes: 3 and 4 wait for it one window from the first of them, then go on.
    @Test func aMissingPacketIsWaitedForUpToTheWindowThenSkipped() {
        var b = started()
        #expect(b.push(packet(3), arrivalMicros: 100_000).isEmpty)
        #expect(b.push(packet(4), arrivalMicros: 101_000).isEmpty)
        #expect(b.release(now: 100_000 + window - 1).isEmpty, "still waiting for 2")
        let out = b.release(now: 100_000 + window)
        #expect(seqs(out) == [3, 4])
        #expect(times(out) == [100_000, 101_000])
        // 2 after the buffer gave up on it: passed on at once for the sequence tracker to judge.
        #expect(seqs(b.push(packet(2), arrivalMicros: 200_000)) == [2])
        #expect(b.putBackInOrder == 0)
        // And the buffer goes on from 5.
        #expect(seqs(b.push(packet(5), arrivalMicros: 200_001)) == [5])
    }

    @Test func aLatePacketInsideTheWindowIsPutBackInOrderAndCounted() {
        var b = started()
        #expect(b.push(packet(3), arrivalMicros: 100_000).isEmpty)
        let out = b.push(packet(2), arrivalMicros: 100_000 + window / 2)
        #expect(seqs(out) == [2, 3])
        #expect(times(out) == [100_000 + window / 2, 100_000])
        #expect(b.putBackInOrder == 1)
    }

    /// Capacity 4: a fourth held packet stops the wait for the missing one before the window ends.
    @Test func aBurstThatFillsTheBufferStopsTheWait() {
        var b = started(capacity: 4)
        for (i, s) in [3, 4, 5].enumerated() {
            #expect(b.push(packet(UInt16(s)), arrivalMicros: 100_000 + UInt64(i)).isEmpty)
        }
        #expect(seqs(b.push(packet(6), arrivalMicros: 100_003)) == [3, 4, 5, 6])
    }

    /// A jump of more than 3000 is a new stream: passed on at once, and followed from there.
    @Test func aSequenceJumpPassesAtOnceAndTheBufferFollowsTheNewNumbers() {
        var b = started()
        #expect(seqs(b.push(packet(9_000), arrivalMicros: 100_000)) == [9_000])
        #expect(seqs(b.push(packet(9_001), arrivalMicros: 100_001)) == [9_001])
    }

    @Test func resetStartsOverAsForANewStream() {
        var b = started()
        b.reset()
        // After a reset the next packet is a first packet again: held one window.
        #expect(b.push(packet(2), arrivalMicros: 100_000).isEmpty)
        #expect(seqs(b.release(now: 100_000 + window)) == [2])
    }

    /// 3 and 2 both arrive after 4: two packets put back in order.
    @Test
    func everyPacketThatArrivedAfterALaterOneIsCounted() {
        var b = started()
        #expect(b.push(packet(4), arrivalMicros: 100_000).isEmpty)
        #expect(b.push(packet(3), arrivalMicros: 100_001).isEmpty)
        #expect(seqs(b.push(packet(2), arrivalMicros: 100_002)) == [2, 3, 4])
        #expect(b.putBackInOrder == 2)
    }
}
