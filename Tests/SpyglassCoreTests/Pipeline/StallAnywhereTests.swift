import Testing
@testable import SpyglassFeed
@testable import SpyglassPipeline
@testable import SpyglassIngest
@testable import SpyglassBitstream

/// A live sender (TCP or a pipe, or raw Annex B in UDP datagrams) that stalls for 60 ms anywhere
/// inside one picture:
/// the idle flush (1 ms) ends the picture there, and whatever it cut or split must be put right
/// (repaired, put back whole) so that every picture equals ffmpeg's. Run on a ``MemorySource``
/// and a ``ManualClock``, so the stall lands exactly where the script puts it, byte by byte:
/// every start code and the first bytes of every NAL unit header (where a cut leaves a slice
/// whose header cannot be read), and 20 points spread over the rest.
///
/// Found this way (RepairTests failed now and then under load): a slice cut inside its header
/// made the slices after it look like a new picture instead of the rest of the split one; a
/// unit with only its start code, or half an H.265 header, was lost; and after any repair in an
/// open-GOP stream the decoder reopened at the next CRA and dropped its RASL pictures.
@Suite struct StallAnywhereTests {
    /// Byte offsets in `au` where a stall is tried.
    static func stallPoints(_ au: [UInt8]) -> [Int] {
        var points = Set(stride(from: 1, to: au.count, by: max(1, au.count / 20)))
        for i in 0..<max(0, au.count - 2) where au[i] == 0 && au[i + 1] == 0 && au[i + 2] == 1 {
            for d in 0...8 where i + d > 0 && i + d < au.count { points.insert(i + d) }
        }
        return points.sorted()
    }

    /// One live stream at 30 fps, with access unit `victim` stalled 60 ms after each byte of `splits`.
    static func script(_ aus: [[UInt8]], victim: Int, splits: [Int]) -> [MemorySource.Step] {
        var t: UInt64 = 2_000_000
        var steps: [MemorySource.Step] = []
        for (i, au) in aus.enumerated() {
            if i == victim {
                var from = 0
                for split in splits.sorted() {
                    steps += [.chunk(Array(au[from..<split]), atMicros: t), .silence(untilMicros: t + 60_000)]
                    t += 60_000
                    from = split
                }
                steps.append(.chunk(Array(au[from...]), atMicros: t))
            } else {
                steps.append(.chunk(au, atMicros: t))
            }
            t += 33_333
            steps.append(.silence(untilMicros: t))
        }
        return steps
    }

    @Test(arguments: ["test/h264-high-4slices.h264", "test/h265-4slices.h265", "test/h264-baseline.h264", "test/h265-main.h265", "test/h264-main-bframes.h264", "test/h265-opengop.h265"],
          [false, true])
    func aStallAnywhereInAPictureLeavesEveryPictureRight(name: String, datagrams: Bool) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(path)).1.map { $0.annexB() }
        let victim = 1   // a P picture right after the IDR: what it breaks shows in every picture to the next one
        var wrong: [String] = []
        for split in Self.stallPoints(aus[victim]) {
            let clock = ManualClock()
            var o = ReceiverOptions()
            o.idleFlushMicros = 1_000
            let h = Harness(source: MemorySource(datagrams: datagrams, clock: clock, steps: Self.script(aus, victim: victim, splits: [split])),
                            options: o, clock: clock)
            h.start()
            let r = h.finish()
            guard r.hashes != expected else { continue }
            let s = r.summary
            wrong.append("byte \(split): \(r.hashes.count) pictures, first wrong \(zip(r.hashes, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1), "
                         + "\(s.prematureIdleFlushes) cut, \(s.picturesSplit) split, \(s.repairs) repaired, \(s.repairsFailed) failed")
        }
        #expect(wrong.isEmpty, "\(name) \(datagrams ? "in datagrams" : "as a byte stream"), access unit \(victim) of \(aus[victim].count) bytes, stalled at: \(wrong)")
    }

    /// Two pauses in the first access unit (parameter sets, SEI, the IDR's start): one in the
    /// middle of the SPS, the other at each of its first 120 bytes. A pause after a zero byte
    /// that followed the first cut forgot the cut unit, so its rest was dropped and no picture
    /// came until the next SPS (RepairTests' cut SPS, under load).
    @Test(arguments: ["test/h264-baseline.h264", "test/h265-main.h265"])
    func twoPausesInTheFirstUnitsLeaveEveryPictureRight(name: String) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let (codec, parsed, _) = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(path))
        let aus = parsed.map { $0.annexB() }
        let units = parsed[0].units
        let sps = try #require(units.firstIndex { $0.header?.type == (codec == .h264 ? 7 : 33) })
        let middle = units[..<sps].reduce(0) { $0 + 4 + $1.bytes.count } + 4 + units[sps].bytes.count / 2
        var wrong: [String] = []
        for other in 1..<min(aus[0].count, 120) where other != middle {
            let clock = ManualClock()
            var o = ReceiverOptions()
            o.idleFlushMicros = 1_000
            let h = Harness(source: MemorySource(datagrams: false, clock: clock, steps: Self.script(aus, victim: 0, splits: [other, middle])),
                            options: o, clock: clock)
            h.start()
            let r = h.finish()
            guard r.hashes != expected else { continue }
            wrong.append("bytes \(other) and \(middle): \(r.hashes.count) pictures, \(r.summary.prematureIdleFlushes) cut, \(r.summary.repairs) repaired")
        }
        #expect(wrong.isEmpty, "\(name): \(wrong)")
    }
}
