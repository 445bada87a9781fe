import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// Issue 17: memory a live feed took for its stream comes back once the stream is gone.
@Suite struct IdleMemoryTests {
    private static func releases(_ h: Harness) -> Int { h.pipeline.metrics.snapshot().counters[.decoderReleases] ?? 0 }

    /// A 4K stream left its decoder's picture pools (hundreds of MB) behind for good when the
    /// sender stopped. Now a live feed silent for `decoderIdleReleaseMicros` closes its decoder,
    /// once, and the next stream opens a new one and decodes as before.
    @Test func aSilentLiveFeedClosesItsDecoderAndDecodesTheNextStream() throws {
        let port = try Sender.freeUDPPort()
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 60
        o.decoderIdleReleaseMicros = 300_000
        let h = Harness(source: try UDPSource(host: "127.0.0.1", port: port), options: o)
        h.start()
        defer { h.pipeline.stop(); _ = h.finish() }
        let path = Fixtures.capture("test/h264-baseline.h264")
        let send = ["send", path, "udp://127.0.0.1:\(port)", "--fps", "120"]
        var (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, send)
        #expect(rc == 0, "\(err)")
        #expect(h.waitForFrames(40), "first stream: \(h.framesSoFar) frames")
        let first = h.framesSoFar
        #expect(Wait.until(timeoutSeconds: 20) { Self.releases(h) >= 1 }, "the silent feed kept its decoder")
        (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, send)
        #expect(rc == 0, "\(err)")
        #expect(h.waitForFrames(first + 40, timeoutSeconds: 20), "second stream: \(h.framesSoFar - first) frames")
        #expect(Wait.until(timeoutSeconds: 5) { Self.opens(h) >= 2 }, "the decoder opened again: \(Self.opens(h)) opens")
        #expect(Wait.until(timeoutSeconds: 20) { Self.releases(h) >= 2 }, "and closed again after it")
    }

    private static func opens(_ h: Harness) -> Int { h.pipeline.metrics.snapshot().counters[.decoderOpens] ?? 0 }
}
