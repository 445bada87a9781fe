import Foundation
import Testing
@testable import SpyglassCore

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

    @Test func emulationPreventionRoundTrip() {
        let raw: [UInt8] = [0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0xFF, 0, 0]
        let escaped = RBSP.escape(raw)
        for i in 0..<(escaped.count - 2) {
            #expect(!(escaped[i] == 0 && escaped[i + 1] == 0 && escaped[i + 2] <= 2), "start-code emulation at \(i)")
        }
        #expect(RBSP.unescape(escaped).prefix(raw.count) == raw[...])
    }
}
