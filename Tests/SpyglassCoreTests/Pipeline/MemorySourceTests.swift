import Testing
@testable import SpyglassFeed
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// The whole pipeline (real libavcodec) on a ``MemorySource`` and a ``ManualClock``: no socket,
/// no sleep, every time the feed sees comes from the script, so what depends on time is exact.
@Suite struct MemorySourceTests {
    /// A live sender of one access unit per datagram, 30 fps: each unit at `start + i * 33,333 µs`,
    /// then silence until the next.
    static func liveScript(_ units: [[UInt8]], startMicros: UInt64, frameMicros: UInt64 = 33_333) -> [MemorySource.Step] {
        units.enumerated().flatMap { i, au -> [MemorySource.Step] in
            let at = startMicros + UInt64(i) * frameMicros
            return [.chunk(au, atMicros: at), .silence(untilMicros: at + frameMicros)]
        }
    }

    /// The idle flush ends each live picture before the next one arrives: exact here, where on
    /// sockets it would be a timing threshold.
    @Test func everyLivePictureIsCompleteBeforeTheNextArrives() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let clock = ManualClock(startMicros: 1_000_000)
        let source = MemorySource(datagrams: true, clock: clock, steps: Self.liveScript(aus, startMicros: 2_000_000))
        let h = Harness(source: source, options: ReceiverOptions(), clock: clock)
        h.start()
        let r = h.finish()
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(path)), "every picture is ffmpeg's")
        #expect(r.timings.count == aus.count)
        for (i, t) in r.timings.enumerated() {
            #expect(t.lastByteMicros == 2_000_000 + UInt64(i) * 33_333, "picture \(i) arrived when the script says")
            #expect(t.completeMicros >= t.lastByteMicros && t.completeMicros < t.lastByteMicros + 33_333,
                    "picture \(i) complete \(t.completeMicros - t.lastByteMicros) µs after its last byte, before the next")
        }
    }

    /// Ten seconds of silence close the decoder (its memory goes back), and the stream that comes
    /// after is decoded by a new one from its IDR: 11 s of the feed's time, none of the test's.
    @Test func elevenSecondsOfSilenceCloseTheDecoderAndTheNextStreamPlays() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")   // IDRs at 0 and 30
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let clock = ManualClock()
        var steps = Self.liveScript(Array(aus[..<30]), startMicros: 2_000_000)
        let resume: UInt64 = 2_000_000 + 30 * 33_333 + 11_000_000
        steps.append(.silence(untilMicros: resume))
        steps += Self.liveScript(Array(aus[30...]), startMicros: resume)
        let h = Harness(source: MemorySource(datagrams: true, clock: clock, steps: steps), options: ReceiverOptions(), clock: clock)
        h.start()
        let r = h.finish()
        #expect(h.pipeline.metrics.count(.decoderReleases) == 1, "the silent feed's decoder closed once")
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(path)), "every picture before and after is ffmpeg's")
        #expect(r.summary.durationSeconds >= 12, "the feed's clock ran through the silence: \(r.summary.durationSeconds) s")
    }
}
