import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassDisplay
@testable import SpyglassFeed

/// `--bundle DIR` (issue 20's bug bundle): the last seconds of what arrived as a packet capture,
/// the probe's JSON and the summary; `spyglass replay` of the capture shows the same pictures the
/// player showed in those seconds, from a random access point on.
@Suite struct BugBundleTests {
    @Test func aBundleReplaysThePicturesThePlayerShowed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = try Sender.freeUDPPort()
        let player = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2",
                                                                 "--bundle", dir, "--bundle-seconds", "2", "--framemd5", "\(dir)/shown.md5"])
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--duration", "5", "--size", "320x240"])
        try #require(rc == 0, "\(err)")
        let (status, playErr) = player.wait(timeoutSeconds: 60)
        #expect(status == 0 && playErr.contains("bug bundle: \(dir)/spyglass-bundle-udp-127-0-0-1-\(port)-"), "\(playErr)")
        let bundle = try #require(try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasPrefix("spyglass-bundle-") })
        let b = "\(dir)/\(bundle)"
        for file in ["capture.pcap", "probe.json", "summary.json", "README.txt"] {
            #expect(FileManager.default.fileExists(atPath: "\(b)/\(file)"), "\(file) in the bundle")
        }
        let probe = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(b)/probe.json"))) as? [String: Any])
        #expect((probe["accessUnits"] as? Int ?? 0) > 40 && probe["codec"] as? String == "H.264", "\(probe)")
        let (rrc, _, rerr) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", "\(b)/capture.pcap", "--port", "\(port)", "--display", "none",
                                                                        "--framemd5", "\(b)/replayed.md5"])
        #expect(rrc == 0, "\(rerr)")
        let shown = Fixtures.parseFrameMD5(try String(contentsOfFile: "\(dir)/shown.md5", encoding: .utf8))
        let replayed = Fixtures.parseFrameMD5(try String(contentsOfFile: "\(b)/replayed.md5", encoding: .utf8))
        #expect(replayed.count >= 55, "at least the 2 s kept, from a keyframe: \(replayed.count) pictures")
        #expect(Array(shown.suffix(replayed.count)) == replayed, "the same pictures as the last the player showed")
    }

    /// `b` asks for a bundle of the feed shown alone (the only one, or the focused one), or of
    /// every feed on the wall.
    @Test func bAsksForTheFeedShownAlone() {
        var one = WallView(feeds: 1, layout: WallLayout.automatic(feeds: 1), gravity: .letterbox)
        #expect(one.apply(.key(.bundle), width: 640, height: 360) == .bundle(feed: 0))
        var wall = WallView(feeds: 4, layout: WallLayout.automatic(feeds: 4), gravity: .letterbox)
        #expect(wall.apply(.key(.bundle), width: 640, height: 360) == .bundle(feed: nil))
        _ = wall.apply(.key(.feed(2)), width: 640, height: 360)
        #expect(wall.apply(.key(.bundle), width: 640, height: 360) == .bundle(feed: 2))
        #expect(Key(sdl: Int32(UInt8(ascii: "b"))) == .bundle)
    }
}

/// The recorder never holds the feed's thread on a slow disk (issue 20): recording into a FIFO
/// nobody reads (a disk that takes nothing), every picture is still decoded and shown, the
/// access units the writer could not take are counted, and the exit is not held.
@Suite struct SlowDiskRecordingTests {
    @Test func aDiskThatTakesNothingDoesNotHoldThePicture() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("slowdisk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(mkfifo("\(dir)/stuck.ts", 0o600) == 0)
        let port = try Sender.freeUDPPort()
        let player = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2",
                                                                 "--record", "\(dir)/stuck.ts", "--summary", "\(dir)/summary.json"])
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        // 480 pictures: more than the recorder's queue holds (300).
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--duration", "4",
                                                                      "--fps", "120", "--size", "160x120"])
        try #require(rc == 0, "\(err)")
        let (status, playErr) = player.wait(timeoutSeconds: 90)
        #expect(status == 1, "a recording that failed is an error: \(playErr)")
        #expect(playErr.contains("the disk took nothing for 10 s") && playErr.contains("dropped while it was too slow"), "\(playErr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(dir)/summary.json"))) as? [String: Any])
        let decoded = summary["framesDecoded"] as? Int ?? 0, shown = summary["framesShown"] as? Int ?? summary["framesDisplayed"] as? Int ?? 0
        #expect(decoded >= 470 && shown == decoded, "the feed played on: \(decoded) decoded, \(shown) shown")
    }
}
