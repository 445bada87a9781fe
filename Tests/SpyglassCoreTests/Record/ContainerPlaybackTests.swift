import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassSession

/// Containers back into Spyglass: `play`/`replay` of Matroska, MP4 (a phone's, with B-frames,
/// H.264 and H.265) and MPEG-TS through libavformat's demuxer, at the file's time stamps, and
/// `spyglass export` of a raw recording into a container at its index's times.
@Suite struct ContainerPlaybackTests {
    /// `spyglass CMD FILE --display none --untimed --framemd5 …`: the hashes shown.
    static func played(_ command: String, _ file: String, _ extra: [String] = ["--untimed"]) throws -> [Fixtures.FrameHash] {
        let md5 = ContainerRecorderTests.temporary("played.md5")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, [command, file, "--display", "none", "--framemd5", md5] + extra)
        try #require(rc == 0, "\(command) \(file): \(err)")
        #expect(err.contains("\((file as NSString).lastPathComponent)"), "the feed goes by the file's name: \(err)")
        return Fixtures.parseFrameMD5(try String(contentsOfFile: md5, encoding: .utf8))
    }

    /// A camera's or phone's MP4 and MKV, as ffmpeg's libx264/libx265 write them (B-frames).
    @Test(arguments: [("libx264", "mp4"), ("libx265", "mp4"), ("libx264", "mkv")])
    func aPhonesFilePlaysBitExact(encoder: String, container: String) throws {
        let file = ContainerRecorderTests.temporary("phone.\(container)")
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2",
                                                               "-c:v", encoder, "-pix_fmt", "yuv420p"]
                                            + (encoder == "libx265" ? ["-x265-params", "log-level=error", "-tag:v", "hvc1"] : []) + [file])
        try #require(rc == 0, "\(err)")
        let shown = try Self.played("play", file)
        let expected = try Fixtures.ffmpegFrameMD5(file)
        #expect(shown.count == 60 && shown == expected, "\(encoder) in \(container)")
    }

    /// `replay --from` (and `--to`) of a B-frame file is frame-accurate in presentation order: it
    /// decodes from the keyframe before the target and shows the pictures from the target on
    /// (and to the end given), whichever access units they came from (decode order is not
    /// display order), and the summary counts the ones decoded only to reach it.
    /// x265's default open GOP too: after a seek to its CRA picture the decoder drops the leading
    /// pictures before it (they reference the GOP before), and each picture is shown or hidden by
    /// its own time, not by how many came out.
    @Test(arguments: [("libx264", "mkv"), ("libx264", "mp4"), ("libx265", "mkv"), ("libx265 open GOP", "ts")])
    func replayFromABFrameFileIsFrameAccurate(encoder: String, container: String) throws {
        let file = ContainerRecorderTests.temporary("bframes.\(container)")
        let x265 = ["-c:v", "libx265", "-x265-params", "log-level=error" + (encoder == "libx265" ? ":open-gop=0" : "")]
            + (container == "ts" ? [] : ["-tag:v", "hvc1"])
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "90"]
                                            + (encoder == "libx264" ? ["-c:v", "libx264"] : x265)
                                            + ["-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", file])
        try #require(rc == 0, "\(err)")
        let all = try Fixtures.ffmpegFrameMD5(file)
        try #require(all.count == 90)
        // 1.5 s is picture 45; the keyframe before it is picture 30 (1.0 s).
        let md5 = ContainerRecorderTests.temporary("from.md5")
        let (prc, _, perr) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", file, "--from", "1.5", "--display", "none", "--untimed", "--framemd5", md5])
        try #require(prc == 0, "\(perr)")
        let shown = Fixtures.parseFrameMD5(try String(contentsOfFile: md5, encoding: .utf8))
        #expect(shown == Array(all.dropFirst(45)), "\(encoder) in \(container): \(shown.count) shown")
        #expect(perr.contains("only to reach a seek target), 45 displayed"), "\(perr)")
        // To 2.5 s: pictures 45 to 75 (2.5 s), whichever access units come after in decode order.
        let (trc, _, terr) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", file, "--from", "1.5", "--to", "2.5", "--display", "none", "--untimed", "--framemd5", md5])
        try #require(trc == 0, "\(terr)")
        #expect(Fixtures.parseFrameMD5(try String(contentsOfFile: md5, encoding: .utf8)) == Array(all[45...75]), "--from 1.5 --to 2.5")
        // Past the end: one error line that names the file given, not the temporary import.
        let (erc, _, eerr) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", file, "--from", "100", "--display", "none"])
        #expect(erc == 1 && eerr.contains("error: \(file): --from 100.000 s is past the last picture of the recording (at 2.967 s)"), "\(eerr)")
    }

    /// A replay held on its last picture (a window's) shows every picture of a B-frame file to
    /// the last: the decoder gives up the pictures it holds for reordering when the hold starts.
    @Test func aHeldReplayShowsEveryPictureToTheLast() throws {
        let file = ContainerRecorderTests.temporary("held.mkv")
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "90",
                                                               "-c:v", "libx264", "-bf", "2", "-g", "30", "-pix_fmt", "yuv420p", file])
        try #require(rc == 0, "\(err)")
        let stream = try ContainerImport.recording(of: file)
        defer { try? FileManager.default.removeItem(atPath: (stream as NSString).deletingLastPathComponent) }
        let source = try RecordingSource(streamPath: stream, untimed: true, holdsAtEnd: true)
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 60
        let h = Harness(source: source, options: o)
        h.start()
        defer { h.pipeline.stop(); _ = h.finish() }
        #expect(h.waitForFrames(90), "\(h.framesSoFar) of 90 pictures shown")
        #expect(source.progress.paused, "held at the end")
        #expect(h.hashesSoFar == (try Fixtures.ffmpegFrameMD5(file)), "ffmpeg's pictures, the last one last")
    }

    /// `spyglass probe` reads a container's video through the demuxer too.
    @Test func probeReadsAContainer() throws {
        let file = ContainerRecorderTests.temporary("probe.mp4")
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2",
                                                               "-c:v", "libx264", "-pix_fmt", "yuv420p", file])
        try #require(rc == 0, "\(err)")
        let (prc, out, perr) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", file])
        #expect(prc == 0 && out.hasPrefix(file) && out.contains("picture               320x240") && out.contains("access units          60"),
                "\(out)\(perr)")
        #expect(out.contains("B-frames              yes"), "libx264's default GOP has B-frames")
    }

    /// `--record` needs a file name; the split options need `--record`.
    @Test(arguments: [["--record", ""], ["--record", "/tmp/"], ["--record-split-mb", "1"]])
    func aRecordingNeedsAName(args: [String]) throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-aud.h264"), "--display", "none"] + args)
        #expect(rc == 1 && err.split(separator: "\n").count == 1 && err.contains("--record"), "\(args): \(err)")
    }

    /// What `--record` wrote plays back through `replay` (each container) and `play` (Matroska,
    /// MP4), every picture bit-exact.
    @Test(arguments: ["mkv", "mp4", "ts"])
    func aRecordingPlaysBack(container: String) throws {
        let capture = Fixtures.capture("test/h264-baseline.h264")
        let file = ContainerRecorderTests.temporary("rec.\(container)")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", capture, "--display", "none", "--record", file])
        try #require(rc == 0, "\(err)")
        let expected = try Fixtures.ffmpegFrameMD5(capture)
        #expect(try Self.played("replay", file) == expected)
        if container != "ts" { #expect(try Self.played("play", file) == expected) }
    }

    /// Replay keeps the file's time stamps: a recording that spans 3.5 s (a 1.5 s pause in it)
    /// takes at least that long to replay; `--speed 2` half of it.
    @Test func replayTakesTheFilesTime() throws {
        let file = ContainerRecorderTests.temporary("paused.mkv")
        let port = try Sender.freeUDPPort()
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "3", "--record", file])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        for k in 0..<2 {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--size", "320x240", "--duration", "1"])
            try #require(rc == 0, "\(err)")
            if k == 0 { Sender.pace(micros: 1_500_000) }   // the pause under test: the sender pauses
        }
        _ = play.wait()
        let pts = try ContainerRecorderTests.packets(file).map(\.pts)
        let span = (try #require(pts.last)) - pts[0]
        try #require(span >= 3.4, "the recording spans \(span) s")
        for (speed, share) in [("1", 1.0), ("2", 0.5)] {
            let t0 = Date()
            let shown = try Self.played("replay", file, ["--speed", speed])
            let took = Date().timeIntervalSince(t0)
            #expect(shown.count == pts.count)
            #expect(took >= span * share - 0.1, "replay at \(speed)x took \(took) s of a \(span) s recording")
        }
    }

    /// An MP4's fragments begin where their pictures were captured, on an uneven link too:
    /// pictures 50 ms apart (so that the 1 s cut, at picture 20, is Spyglass's and not
    /// libavformat's at the keyframe, picture 30) and every third 4 ms late. libavformat puts a
    /// fragment's first picture where the last one before it ends, and that picture's duration
    /// had been guessed (off by 3 ms in a loaded CI run).
    @Test func mp4FragmentsKeepUnevenCaptureTimes() throws {
        let raw = ContainerRecorderTests.temporary("uneven.h264")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-baseline.h264"), "--display", "none",
                                                                     "--untimed", "--record", raw])
        try #require(rc == 0, "\(err)")
        let index = raw + ".idx"
        var lines = try String(contentsOfFile: index, encoding: .utf8).split(separator: "\n").map(String.init)
        var expected: [Int64] = []
        for i in 1..<lines.count {
            var f = lines[i].split(separator: ",").map(String.init)
            let t = Int64(i - 1) * 50_000 + (i % 3 == 0 ? 4_000 : 0)
            f[5] = String(1_796_000_000_000_000 + t)
            lines[i] = f.joined(separator: ",")
            expected.append(t)
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: index, atomically: true, encoding: .utf8)
        let out = ContainerRecorderTests.temporary("uneven.mp4")
        let (xrc, _, xerr) = try Fixtures.run(Fixtures.spyglassBinary, ["export", raw, out])
        try #require(xrc == 0, "\(xerr)")
        let pts = try ContainerRecorderTests.packets(out).map { Int64(($0.pts * 1e6).rounded()) }
        try #require(pts.count == expected.count && expected.count > 40, "\(pts.count) pictures of \(expected.count)")
        #expect(zip(pts, expected).filter { $0 - pts[0] != $1 }.isEmpty, "pictures off their capture time (µs): \(zip(pts, expected).map { $0 - pts[0] - $1 })")
    }

    /// `spyglass export`: a raw recording (`--record NAME.h264`) into each container, bit-exact,
    /// with the index's capture times as time stamps.
    @Test(arguments: ["mkv", "mp4", "ts"])
    func exportGivesTheIndexsTimes(container: String) throws {
        let raw = ContainerRecorderTests.temporary("flight.h264")
        let port = try Sender.freeUDPPort()
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2", "--record", raw])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let (src, _, serr) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--size", "320x240", "--duration", "2"])
        try #require(src == 0, "\(serr)")
        _ = play.wait()
        let out = ContainerRecorderTests.temporary("flight.\(container)")
        let (rc, said, err) = try Fixtures.run(Fixtures.spyglassBinary, ["export", raw, out])
        #expect(rc == 0 && said.contains(out), "\(said)\(err)")
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        let (again, _, againErr) = try Fixtures.run(Fixtures.spyglassBinary, ["export", raw, out])
        #expect(again == 1 && againErr.contains("\(out) exists: give a new name"), "an export never overwrites: \(againErr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == written)
        let index = try #require(RecordingIndex.load(streamPath: raw))
        let exported = try Fixtures.ffmpegFrameMD5(out), recorded = try Fixtures.ffmpegFrameMD5(raw)
        #expect(exported == recorded, "the same pictures")
        let pts = try ContainerRecorderTests.packets(out).map(\.pts)
        try #require(pts.count == index.entries.count)
        // Pictures are presented at their capture times, each at least 1 ms after the one
        // before (two pictures that arrived within 1 ms of each other on a busy machine).
        var captures: [Double] = []
        for entry in index.entries {
            let t = Double(entry.captureWallMicros) / 1e6
            captures.append(captures.last.map { max(t, $0 + 0.001) } ?? t)
        }
        for (i, (a, b)) in zip(pts, captures).enumerated() {
            // To the muxer's tick: 1 ms (Matroska, MP4 here), 1/90000 s (TS).
            #expect(abs((a - pts[0]) - (b - captures[0])) <= 0.0015, "picture \(i)")
        }
    }
}
