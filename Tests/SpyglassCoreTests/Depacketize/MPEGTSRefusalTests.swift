import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassCore

/// MPEG-TS is never scanned as Annex B (that gave green garbage under a "playing H.264" title):
/// until it is demultiplexed, it is refused with a clear reason.
@Suite struct MPEGTSRefusalTests {
    static func transportStream() throws -> String {
        // Its own file per call: the tests run in parallel.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ts-\(getpid())-\(UUID().uuidString).ts").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-frames:v", "30", "-c:v", "libx264", "-preset", "ultrafast", "-f", "mpegts", path])
        try #require(rc == 0, "\(err)")
        return path
    }

    @Test func aTransportStreamFileIsRefusedWithItsReason() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", try Self.transportStream(), "--display", "none"])
        #expect(rc == 1)
        #expect(err.contains("this is MPEG-TS"), "\(err)")
        #expect(!err.contains("frames decoded, 0 displayed") || err.contains("0 NAL units"), "nothing was scanned as Annex B")
    }

    /// ffmpeg's own MPEG-TS muxer over UDP (7 packets of 188 bytes per datagram): the feed fails
    /// with the reason; it never decodes garbage.
    @Test func transportStreamOverUDPFailsTheFeedNotTheProcess() throws {
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: 10)
        o.timeoutSeconds = 5
        let h = Harness(source: udp, options: o)
        h.start()
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-re", "-i", try Self.transportStream(), "-c", "copy",
                                                                 "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        #expect(rc == 0, "\(err)")
        let r = h.finish()
        #expect(r.hashes.isEmpty)
        #expect(h.error?.contains("this is MPEG-TS") == true, "\(h.error ?? "no error")")
        #expect(r.summary.nalUnits == 0)
    }

    @Test func onlyWholeTSPacketsOrThreeSyncBytesLookLikeTS() {
        func looks(_ b: [UInt8]) -> Bool { b.withUnsafeBytes { AutoDepacketizer.looksLikeMPEGTS($0) } }
        var ts = [UInt8](repeating: 0xFF, count: 7 * 188)
        for i in 0..<7 { ts[i * 188] = 0x47 }
        #expect(looks(ts))
        #expect(looks(Array(ts[0..<188])))
        #expect(!looks(Array(ts[0..<300])), "one sync byte and a partial packet say nothing")
        var annexB = ts
        annexB[188] = 0x00
        #expect(!looks(annexB))
        #expect(!looks([0, 0, 0, 1, 0x67] + [UInt8](repeating: 0x47, count: 400)))
    }
}
