import Foundation
import Testing
@testable import SpyglassCore

/// A sender that restarts with another framing on the same port is followed, not dropped as
/// "not RTP" for ever.
@Suite struct FramingChangeTests {
    /// ffmpeg sends RTP, then the same port gets a raw Annex B stream from ffmpeg's UDP muxer:
    /// every picture of both parts comes out, bit-exact.
    @Test func rtpThenRawAnnexBOnTheSamePort() throws {
        let a = Fixtures.capture("test/h264-baseline.h264"), b = Fixtures.capture("test/h264-aud.h264")
        let expectedA = try Fixtures.ffmpegFrameMD5(a), expectedB = try Fixtures.ffmpegFrameMD5(b)
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: expectedA.count + expectedB.count, idleFlushMicros: 1_000)
        o.timeoutSeconds = 5
        let h = Harness(source: udp, options: o)
        h.start()
        let ffmpeg = "/usr/bin/ffmpeg"
        let (rc1, _, e1) = try Fixtures.run(ffmpeg, ["-v", "error", "-re", "-i", a, "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)"])
        #expect(rc1 == 0, "\(e1)")
        #expect(h.waitForFrames(expectedA.count), "the RTP part came out")
        let (rc2, _, e2) = try Fixtures.run(ffmpeg, ["-v", "error", "-re", "-i", b, "-c", "copy", "-f", "h264", "udp://127.0.0.1:\(port)?pkt_size=1200"])
        #expect(rc2 == 0, "\(e2)")
        let r = h.finish()
        #expect(r.hashes == expectedA + expectedB)
        #expect(r.summary.resets >= 1, "the framing change restarted the feed")
        #expect(!r.summary.rtp, "the feed ended on raw Annex B")
    }
}
