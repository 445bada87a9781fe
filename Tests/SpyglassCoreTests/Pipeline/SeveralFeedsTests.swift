import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// Several feeds in one process: each its own pipeline and thread; one feed's end or bad input
/// changes nothing in another.
@Suite struct SeveralFeedsTests {
    /// Two files and a live UDP feed at once; the UDP sender stops half-way through its stream.
    /// Both file feeds are bit-exact with ffmpeg, and the UDP feed's pictures are exactly the
    /// first pictures of its stream.
    @Test func aSenderThatStopsHalfWayChangesNoOtherFeed() throws {
        let h264 = Fixtures.capture("test/h264-main-bframes.h264"), h265 = Fixtures.capture("test/h265-main.h265")
        let live = Fixtures.capture("test/h264-baseline.h264")
        var fileOptions = ReceiverOptions()
        fileOptions.untimed = true
        var liveOptions = ReceiverOptions()
        liveOptions.timeoutSeconds = 1   // the sender is gone: the feed ends after 1 s of silence
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        let feeds = [Harness(source: try StreamFDSource.file(path: h264), options: fileOptions),
                     Harness(source: try StreamFDSource.file(path: h265), options: fileOptions),
                     Harness(source: udp, options: liveOptions)]
        for f in feeds { f.start() }
        let aus = Sender.accessUnits(of: try Fixtures.bytes(live))
        let sent = aus.count / 2
        // One access unit at a time, each once the last one's picture is out (the event, not a
        // guessed pace): a loopback burst of the whole stream could outrun the receive buffer.
        for (k, au) in aus.prefix(sent).enumerated() {
            Sender.udp(port: port, datagrams: Sender.randomCuts(au, sizes: 1400...1400, seed: 2))
            #expect(feeds[2].waitForFrames(k + 1), "picture \(k) of the live feed came out within 10 s")
        }
        let results = feeds.map { $0.finish() }
        #expect(results[0].hashes == (try Fixtures.ffmpegFrameMD5(h264)))
        #expect(results[1].hashes == (try Fixtures.ffmpegFrameMD5(h265)))
        let expectedLive = try Fixtures.ffmpegFrameMD5(live)
        #expect(results[2].hashes.count == sent)
        #expect(results[2].hashes == Array(expectedLive.prefix(results[2].hashes.count)))
        #expect(feeds.allSatisfy { $0.pipeline.state == .ended })
    }

    /// `spyglass play A B --display none --framemd5 'o-{n}.md5'` writes one correct file per feed
    /// and one summary line per feed.
    @Test func playWritesOneFrameMD5FilePerFeed() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-4slices.h265")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary,
                                            ["play", a, b, "--display", "none", "--untimed", "--framemd5", "\(dir)/o-{n}.md5"])
        #expect(rc == 0, "\(err)")
        for (n, path) in [a, b].enumerated() {
            let text = try String(contentsOfFile: "\(dir)/o-\(n + 1).md5", encoding: .utf8)
            #expect(Fixtures.parseFrameMD5(text) == (try Fixtures.ffmpegFrameMD5(path)))
        }
        let summaries = err.split(separator: "\n").filter { $0.contains("frames decoded") }
        #expect(summaries.count == 2)
        #expect(summaries.contains { $0.contains(a) } && summaries.contains { $0.contains(b) })
        // Each feed's own lines say whose they are.
        #expect(err.contains("spyglass: feed 1: codec: H.264"), "\(err)")
        #expect(err.contains("spyglass: feed 2: codec: H.265"), "\(err)")
    }

    /// With several sources, an output path without `{n}` is refused before anything plays.
    @Test func severalFeedsNeedNInOutputPaths() throws {
        let a = Fixtures.capture("test/h264-aud.h264")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", a, a, "--display", "none", "--framemd5", "/tmp/same.md5"])
        #expect(rc != 0)
        #expect(err.contains("{n}"), "\(err)")
    }
}
