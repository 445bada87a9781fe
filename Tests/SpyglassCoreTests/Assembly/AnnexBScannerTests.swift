import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
import TestSupport
@testable import SpyglassPipeline

@Suite struct AnnexBScannerTests {
    private func split(_ chunks: [[UInt8]]) -> ([[UInt8]], AnnexBScanner.Counters) {
        var s = AnnexBScanner()
        var out: [[UInt8]] = []
        for c in chunks { s.push(c, arrivalMicros: 0) { out.append($0.bytes) } }
        s.flush(atMicros: 0, reason: .endOfStream) { out.append($0.bytes) }
        return (out, s.counters)
    }

    @Test func threeAndFourByteStartCodesExtraZerosAndJunk() {
        let stream: [UInt8] = [0xAA, 0xBB, 0x00, 0x00, 0x00, 0x01, 0x67, 0x42, 0x00,   // junk, 4-byte code, SPS-ish
                               0x00, 0x00, 0x00, 0x00, 0x01, 0x68, 0xCE,                  // extra zeros before a code
                               0x00, 0x00, 0x01, 0x65, 0x88, 0x00, 0x00, 0x03, 0x01]      // 3-byte code, escaped bytes
        let (units, counters) = split([stream])
        #expect(units == [[0x67, 0x42], [0x68, 0xCE], [0x65, 0x88, 0x00, 0x00, 0x03, 0x01]])
        #expect(counters.junkBytes == 2)
    }

    @Test func zeroLengthUnitsAreCountedAndSkipped() {
        let (units, counters) = split([[0, 0, 1, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1, 0, 0, 1]])
        #expect(units == [[0x09, 0xF0]])
        #expect(counters.zeroLengthUnits == 3, "two between codes, one at the very end")
    }

    @Test func everyCutGivesTheSameUnits() throws {
        let bytes = Array(try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")).prefix(20_000))
        let (whole, _) = split([bytes])
        #expect(whole.count > 5)
        let (oneByte, _) = split(bytes.map { [$0] })
        #expect(oneByte == whole)
        for seed in 1...5 as ClosedRange<UInt64> {
            let (cut, _) = split(Sender.randomCuts(bytes, sizes: 1...37, seed: seed))
            #expect(cut == whole)
        }
    }

    @Test func idleFlushEndsTheUnitAndKeepsAStartCodeSplitAcrossTheGap() {
        var s = AnnexBScanner()
        var out: [[UInt8]] = []
        s.push([0, 0, 0, 1, 0x65, 0x11, 0x22, 0, 0], arrivalMicros: 1) { out.append($0.bytes) }
        #expect(out.isEmpty, "end unknown until the next start code or a flush")
        s.flush(atMicros: 2, reason: .idle) { out.append($0.bytes) }
        #expect(out == [[0x65, 0x11, 0x22]])
        s.push([1, 0x41, 0x9A], arrivalMicros: 3) { out.append($0.bytes) }   // "00 00" + "01": a start code
        s.flush(atMicros: 4, reason: .endOfStream) { out.append($0.bytes) }
        #expect(out == [[0x65, 0x11, 0x22], [0x41, 0x9A]])
        #expect(s.counters.idleFlushes == 1)
    }

    @Test func anIdleFlushThatCutAUnitIsDetectedAndAStartCodeIsNot() {
        var s = AnnexBScanner()
        s.push([0, 0, 0, 1, 0x65, 0x11], arrivalMicros: 1) { _ in }
        s.flush(atMicros: 2, reason: .idle) { _ in }
        s.push([0, 0, 0, 1, 0x41, 0x22], arrivalMicros: 3) { _ in }      // a new unit: the flush was right
        #expect(s.counters.prematureIdleFlushes == 0)
        s.flush(atMicros: 4, reason: .idle) { _ in }
        s.push([0x33, 0x44, 0, 0, 1, 0x41], arrivalMicros: 5) { _ in }    // more of the unit: it was cut
        #expect(s.counters.prematureIdleFlushes == 1)
        #expect(s.counters.junkBytes == 2)
    }

    @Test func oversizeUnitIsDroppedAndCounted() {
        var s = AnnexBScanner(maxUnitBytes: 100)
        var out: [[UInt8]] = []
        s.push([0, 0, 1, 0x65] + [UInt8](repeating: 0x55, count: 500) + [0, 0, 1, 0x41, 0x01], arrivalMicros: 0) { out.append($0.bytes) }
        s.flush(atMicros: 0, reason: .endOfStream) { out.append($0.bytes) }
        #expect(out == [[0x41, 0x01]])
        #expect(s.counters.oversizeUnits == 1)
    }

    /// Issue 17: garbage without start codes grew one "unit" to the cap, and the scanner kept
    /// that buffer (and the cut unit it held for a repair) after the garbage stopped.
    @Test func aHugeUnitOfGarbageLeavesNoBigBufferBehind() {
        var s = AnnexBScanner(maxUnitBytes: 4 << 20)
        s.reopensCutUnits = true
        var rng = SeededRandom(seed: 17)
        let chunk = (0..<1400).map { _ in UInt8(1 + rng.next() % 255) }   // no zero byte: no start code
        s.push([0, 0, 1, 0x65], arrivalMicros: 0) { _ in }
        for i in 0..<3200 { s.push(chunk, arrivalMicros: UInt64(i)) { _ in } }   // 4.5 MB: over the cap
        s.push([0, 0, 1, 0x65], arrivalMicros: 3200) { _ in }
        for i in 0..<2000 { s.push(chunk, arrivalMicros: UInt64(3200 + i)) { _ in } }   // a 2.8 MB unit
        #expect(s.counters.oversizeUnits == 1)
        var out: [NALUnit] = []
        s.flush(atMicros: 6000, reason: .idle) { out.append($0) }
        #expect(out.count == 1 && out[0].bytes.count > 1 << 20, "the unit after the dropped one is passed on")
        out.removeAll()
        #expect(s.retainedBytes >= 1 << 20, "held for a repair until the sender is gone")
        s.forgetCutUnit()
        #expect(s.retainedBytes <= AnnexBScanner.retainedCapacity,
                "held \(s.retainedBytes) bytes after the unit went on and the cut one was forgotten")
        s.push([0, 0, 1, 0x41, 0x9A, 0, 0, 1], arrivalMicros: 7000) { out.append($0) }
        #expect(out.map(\.bytes) == [[0x41, 0x9A]], "and it scans on as before")
    }

    /// A unit is a copy of exactly its bytes: sharing the scanner's buffer pinned 64 KiB or more
    /// to every unit, a 2-byte one kept in a parameter-set store included.
    @Test func aSmallUnitDoesNotPinTheScannersBuffer() {
        var s = AnnexBScanner()
        var out: [NALUnit] = []
        s.push([0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65] + [UInt8](repeating: 0x55, count: 200_000) + [0, 0, 1],
               arrivalMicros: 0) { out.append($0) }
        #expect(out.map(\.bytes.count) == [2, 200_001])
        #expect(out[0].bytes.capacity < 1024, "a 2-byte unit holds \(out[0].bytes.capacity) bytes")
        #expect(out[1].bytes.capacity < 200_001 + 1024, "a 200 kB unit holds \(out[1].bytes.capacity) bytes")
    }

    /// The cut unit a repair may still need is held only while the input is not long idle.
    @Test func aLongIdleForgetsTheCutUnitAndTheRestIsJunk() {
        var d = AnnexBDepacketizer(maxUnitBytes: 1 << 20, datagrams: true, idleFlushMicros: 1000)
        var events: [DepacketizerEvent] = []
        let head: [UInt8] = [0, 0, 1, 0x65] + [UInt8](repeating: 0x55, count: 100_000)
        head.withUnsafeBytes { d.push($0, arrivalMicros: 1, truncated: false) { events.append($0) } }
        d.tick(nowMicros: 100_000) { events.append($0) }                   // idle flush: the unit goes on
        #expect(events.contains { if case .unit(let u) = $0 { return u.bytes.count > 100_000 } else { return false } })
        let held = d.retainedBytes
        #expect(held >= 100_000)
        d.tick(nowMicros: 100_000 + AnnexBDepacketizer.cutUnitHoldMicros) { events.append($0) }
        #expect(d.retainedBytes <= held - 100_000, "the cut unit's bytes are let go")
        events.removeAll()
        let tail: [UInt8] = [0x66, 0x77, 0, 0, 1, 0x41, 0x01]
        tail.withUnsafeBytes { d.push($0, arrivalMicros: 3_000_000, truncated: false) { events.append($0) } }
        #expect(!events.contains { if case .unit(let u) = $0 { return u.repairs != nil } else { return false } },
                "no repair from a unit forgotten")
    }

    @Test func emulationPreventionRoundTrip() {
        let raw: [UInt8] = [0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0xFF, 0, 0]
        let escaped = RBSP.escape(raw)
        for i in 0..<(escaped.count - 2) {
            #expect(!(escaped[i] == 0 && escaped[i + 1] == 0 && escaped[i + 2] <= 2), "start-code emulation at \(i)")
        }
        #expect(RBSP.unescape(escaped).prefix(raw.count) == raw[...])
    }
}
