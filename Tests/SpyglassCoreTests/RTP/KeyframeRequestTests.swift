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

    /// tools/impair relaying 127.0.0.1:`listen` (0: any free port) to `port`; returns the process
    /// and the port it listens on.
    static func relay(listen: Int = 0, to port: UInt16, _ extra: [String]) throws -> (Process, Int) {
        let proxy = Process()
        proxy.executableURL = Fixtures.root.appendingPathComponent("tools/impair")
        proxy.arguments = ["--listen", "\(listen)", "--to", "127.0.0.1:\(port)"] + extra
        let out = Pipe()
        proxy.standardOutput = out
        try Fixtures.launch(proxy)
        let first = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        let json = try JSONSerialization.jsonObject(with: Data(first.prefix { $0 != "\n" }.utf8)) as? [String: Int]
        let listening = try #require(json?["listening"], "tools/impair printed its port: \(first)")
        return (proxy, listening)
    }

    static func stop(_ p: Process) { if p.isRunning { p.terminate() }; p.waitUntilExit() }

    static func play(keyframeRequests: Bool) throws -> Run {
        let source = try Sender.rtpSource()
        let port = source.boundPort
        let (proxy, proxyPort) = try relay(to: port, ["--loss", "0.02", "--seed", "7"])
        defer { stop(proxy) }
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

    /// `spyglass send --rtp` as the camera: it sends sender reports to the destination's port + 1
    /// and answers PLIs with IDRs (an IDR only every 900 pictures otherwise). Its RTP goes through
    /// 2 % loss; its RTCP through a relay that loses nothing and carries the answers back.
    @Test func spyglassSendAnswersKeyframeRequestsWithIDRs() throws {
        let source = try Sender.rtpSource()
        let port = source.boundPort
        // The RTCP relay must sit on the RTP relay's port + 1 (where send reports): when another
        // test holds that port, another pair.
        var pair: (rtp: Process, rtpPort: Int, rtcp: Process)?
        for _ in 0..<8 where pair == nil {
            let (rtp, rtpPort) = try Self.relay(to: port, ["--loss", "0.02", "--seed", "7"])
            if let (rtcp, _) = try? Self.relay(listen: rtpPort + 1, to: port + 1, ["--bidirectional"]) {
                pair = (rtp, rtpPort, rtcp)
            } else {
                Self.stop(rtp)
            }
        }
        let (rtp, rtpPort, rtcp) = try #require(pair, "a relay pair on ports P and P + 1")
        defer { Self.stop(rtp); Self.stop(rtcp) }
        var o = Harness.liveOptions(frames: 240)
        o.timeoutSeconds = 60
        o.transport = .rtp
        let h = Harness(source: source, options: o)
        h.start()
        let sender = try Fixtures.start(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(rtpPort)", "--rtp",
                                                                  "--keyint", "900", "--size", "320x240"])
        let s = h.finish().summary
        sender.process.interrupt()
        _ = sender.wait(timeoutSeconds: 10)
        let log = (try? String(contentsOfFile: sender.errPath, encoding: .utf8)) ?? ""
        #expect(s.datagramsLost > 0 && s.keyframeRequestsLoss > 0, "\(s.line)")
        #expect(s.senderReports > 0, "the sender's reports arrived: \(s.line)")
        #expect(log.contains(" heard, ") && log.contains("keyframe request"), "send's summary: \(log)")
        #expect(s.recoveries > 0, "clean again before the 900th picture: \(s.line)")
    }
}
