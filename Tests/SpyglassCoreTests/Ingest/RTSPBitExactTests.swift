import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest
import SpyglassTransport

/// RTSP's main promise, apart from the rest of RTSPTests so that the two suites' servers run
/// side by side: every picture that GStreamer's RTSP server sends, over UDP, TCP and auto, H.264
/// and H.265, is bit-exact with what its encoder wrote.
@Suite(.serialized) struct RTSPBitExactTests {
    @Test(.enabled(if: RTSPTests.available, "gst-rtsp-server is not installed: run tools/setup (gir1.2-gst-rtsp-server-1.0, python3-gi)"),
          arguments: [("h264", RTSPTransport.udp), ("h264", .tcp), ("h265", .udp), ("h265", .tcp), ("h264", .auto)])
    func everyPictureEqualsTheServersOwn(codec: String, transport: RTSPTransport) throws {
        let ref = RTSPTests.refPath()
        let (server, port) = try RTSPTests.server(["--codec", codec], ref: ref)
        defer { server.process.terminate() }
        let r: Harness.Result
        do { r = try RTSPTests.play("rtsp://127.0.0.1:\(port)/test", transport: transport) } catch {
            Issue.record("\(error); the server said: \((try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? "")")
            throw error
        }
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        try #require(expected.count > 30)
        #expect(r.hashes == expected, "\(codec) over \(transport)")
        #expect(r.summary.rtp && r.summary.datagramsLost == 0)
        // Over TCP they are interleaved frames, over UDP datagrams: packets either way.
        #expect(r.summary.line.contains(" packets, "), "the summary counts RTP/RTCP packets: \(r.summary.line)")
    }
}
