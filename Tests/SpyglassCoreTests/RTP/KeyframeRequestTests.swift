import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// Keyframe requests against a real camera: GStreamer's `rtpbin` with x264enc writing an IDR
/// only every 900 pictures (tools/rtp-camera), its RTP through a relay that drops 2 % of the
/// packets (tools/impair), its RTCP straight to us. Spyglass asks with an RTCP PLI (RFC 4585
/// §6.3.1) when loss damages a picture; rtpbin turns the PLI into an IDR. Without requests no
/// IDR comes in the 240 pictures after the first.
@Suite(.serialized, .enabled(if: RTCPCaptureTimeTests.available, "GStreamer is not installed: run tools/setup"))
struct KeyframeRequestTests {
    struct Run {
        var summary: FeedSummary
        var cameraLog: String
        func count(_ line: String) -> Int { cameraLog.components(separatedBy: "\n").filter { $0.hasPrefix(line) }.count }
    }

    static func play(keyframeRequests: Bool) throws -> Run {
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let port = source.boundPort
        let proxy = Process()
        proxy.executableURL = Fixtures.root.appendingPathComponent("tools/impair")
        proxy.arguments = ["--listen", "0", "--to", "127.0.0.1:\(port)", "--loss", "0.02", "--seed", "7"]
        let out = Pipe()
        proxy.standardOutput = out
        try Fixtures.launch(proxy)
        defer { if proxy.isRunning { proxy.terminate() }; proxy.waitUntilExit() }
        let first = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        let json = try JSONSerialization.jsonObject(with: Data(first.prefix { $0 != "\n" }.utf8)) as? [String: Int]
        let proxyPort = try #require(json?["listening"], "tools/impair printed its port: \(first)")
        var o = Harness.liveOptions(frames: 240)
        o.timeoutSeconds = 60
        o.transport = .rtp
        o.keyframeRequests = keyframeRequests
        let h = Harness(source: source, options: o)
        h.start()
        let camera = try Fixtures.start(Fixtures.root.appendingPathComponent("tools/rtp-camera").path,
                                        ["--to", "127.0.0.1:\(proxyPort)", "--rtcp-to", "127.0.0.1:\(port + 1)",
                                         "--key-int", "900", "--size", "320x240"])
        let r = h.finish()
        camera.process.terminate()
        _ = camera.wait(timeoutSeconds: 10)
        let log = (try? String(contentsOfFile: camera.errPath, encoding: .utf8)) ?? ""
        return Run(summary: r.summary, cameraLog: log)
    }

    @Test func aLossyLinkAsksForKeyframesAndTheCameraSendsThem() throws {
        let run = try Self.play(keyframeRequests: true)
        let s = run.summary
        #expect(s.datagramsLost > 0, "the relay dropped packets")
        #expect(s.keyframeRequestsLoss > 0, "PLIs sent for loss: \(s.line)")
        #expect(run.count("PLI from") > 0, "the camera heard them: \(run.cameraLog)")
        #expect(run.count("IDR on request") > 0, "and wrote IDRs")
        #expect(s.recoveries > 0 && s.recoveryMillisP50 != nil, "the picture came clean again: \(s.line)")
    }

    @Test func withRequestsOffNothingIsAskedAndNoKeyframeComes() throws {
        let run = try Self.play(keyframeRequests: false)
        let s = run.summary
        #expect(s.datagramsLost > 0, "the relay dropped packets")
        #expect(s.keyframeRequestsLoss + s.keyframeRequestsCut + s.keyframeRequestsJoin == 0)
        #expect(run.count("PLI from") == 0, "\(run.cameraLog)")
        #expect(run.count("IDR on request") == 0)
        #expect(s.recoveries == 0, "no IDR after the first in 240 pictures: \(s.line)")
    }
}
