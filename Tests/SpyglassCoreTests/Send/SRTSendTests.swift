import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// `spyglass send FILE srt://… --mpegts` with ffmpeg (libsrt) as the real receiver, as listener
/// and as caller: what ffmpeg records decodes to every picture of the file, bit-exact.
@Suite(.serialized) struct SRTSendTests {
    static let file = Fixtures.capture("test/h264-baseline.h264")

    static func received(_ path: String) throws -> [Fixtures.FrameHash] { try Fixtures.ffmpegFrameMD5(path) }

    static func outputPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("srt-send-\(getpid())-\(UUID().uuidString).ts").path
    }

    @Test func ffmpegCallsSpyglassSendingAsListener() throws {
        let port = try Sender.freeUDPPort()
        let send = try Fixtures.start(Fixtures.spyglassBinary, ["send", Self.file, "srt://:\(port)", "--mpegts"])
        defer { send.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass send listens within 10 s")
        let out = Self.outputPath()
        try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", "srt://127.0.0.1:\(port)?mode=caller", "-c", "copy", "-f", "mpegts", out],
                         timeoutSeconds: 60)
        let (rc, err) = send.wait()
        #expect(rc == 0, "\(err)")
        #expect(err.contains("SRT: RTT"), "the sender reports SRT's statistics")
        #expect(try Self.received(out) == (try Fixtures.ffmpegFrameMD5(Self.file)))
    }

    @Test func spyglassSendingCallsAnFFmpegListener() throws {
        let port = try Sender.freeUDPPort()
        let out = Self.outputPath()
        let ffmpeg = try Fixtures.start("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", "srt://127.0.0.1:\(port)?mode=listener",
                                                            "-c", "copy", "-f", "mpegts", out])
        defer { ffmpeg.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "ffmpeg listens within 10 s")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", Self.file, "srt://127.0.0.1:\(port)", "--mpegts"], timeoutSeconds: 60)
        #expect(rc == 0, "\(err)")
        #expect(ffmpeg.wait().0 == 0, "ffmpeg ends when the sender closes")
        #expect(try Self.received(out) == (try Fixtures.ffmpegFrameMD5(Self.file)))
    }

    /// A listening sender whose receiver leaves goes on and serves the next caller (MPEG-TS: srt://
    /// implies --mpegts).
    @Test func aListeningSenderServesTheNextReceiver() throws {
        let port = try Sender.freeUDPPort()
        let send = try Fixtures.start(Fixtures.spyglassBinary, ["send", "pattern", "srt://:\(port)", "--size", "320x240",
                                                                "--keyint", "10", "--duration", "60"])
        defer { send.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass send listens within 10 s")
        for receiver in 1...2 {
            var o = Harness.liveOptions(frames: 20, idleFlushMicros: 1_000)
            o.timeoutSeconds = 10
            let h = Harness(source: try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)")), options: o)
            h.start()
            let r = h.finish()
            #expect(r.hashes.count == 20 && r.summary.decodeErrors == 0, "receiver \(receiver)")
            #expect(r.summary.tsPackets > 0, "srt:// carries MPEG-TS without --mpegts")
        }
        send.process.terminate()
        let (_, err) = send.wait()
        #expect(err.contains("the receiver went away; waiting for the next one"), "\(err)")
    }
}
