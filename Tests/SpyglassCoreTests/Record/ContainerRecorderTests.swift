import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassBitstream
@testable import SpyglassSession

/// `--record FILE.mkv|.ts|.mp4`: containers muxed by libavformat, read back by readers no one
/// here wrote (ffmpeg, ffprobe, mkvmerge, GStreamer's demuxers), with the stream's own timing,
/// and what a `kill -9` leaves.
@Suite(.serialized) struct ContainerRecorderTests {
    static func temporary(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("container-\(getpid())-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/" + name
    }

    /// ffprobe's packets of `path`: (pts in seconds, keyframe).
    static func packets(_ path: String) throws -> [(pts: Double, key: Bool)] {
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                  "packet=pts_time,flags", "-of", "csv=p=0", path])
        try #require(rc == 0, "ffprobe read \(path): \(err)")
        return out.split(separator: "\n").compactMap { line in
            let f = line.split(separator: ",")
            guard f.count >= 2, let t = Double(f[0]) else { return nil }
            return (t, f[1].contains("K"))
        }
    }

    /// The text track's cues as ffmpeg reads them (converted to SubRip): their texts.
    static func captions(_ path: String) throws -> [String] {
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-map", "0:s:0", "-f", "srt", "-"])
        try #require(rc == 0, "ffmpeg reads the text track of \(path): \(err)")
        return out.components(separatedBy: "\n\n").compactMap { cue in
            let lines = cue.split(separator: "\n")
            return lines.count >= 3 ? lines[2...].joined(separator: " ") : nil
        }
    }

    /// The GStreamer demuxer for each container, ending in a fakesink: exit 0 at end of stream.
    static func gstreamerReads(_ path: String) throws -> Bool {
        let demux = ["mkv": "matroskademux", "ts": "tsdemux", "mp4": "qtdemux"][(path as NSString).pathExtension]!
        let parse = "h264parse"
        let (rc, _, _) = try Fixtures.run("/usr/bin/gst-launch-1.0", ["-q", "filesrc", "location=\(path)", "!", demux, "!", parse,
                                                                     "!", "fakesink"], timeoutSeconds: 60)
        return rc == 0
    }

    @Test(arguments: ["mkv", "ts", "mp4"])
    func everyPictureIsBitExactAndTheReadersOpenIt(container: String) throws {
        let capture = Fixtures.capture("test/h264-baseline.h264")
        let file = Self.temporary("rec.\(container)")
        let before = Date()
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", capture, "--display", "none", "--record", file])
        let after = Date()
        #expect(rc == 0 && err.contains("recording to \(file)"), "\(err)")
        #expect(try Fixtures.ffmpegFrameMD5(file) == Fixtures.ffmpegFrameMD5(capture), "ffmpeg decodes the \(container) bit-exact")
        #expect(try Self.gstreamerReads(file), "GStreamer's demuxer reads the \(container)")
        let keys = try Self.packets(file).filter(\.key).count
        #expect(keys == 2, "both IDRs are marked keyframes (\(keys))")
        guard container != "ts" else { return }
        // A caption per picture: the time (no capture time in this file: its arrival).
        let cues = try Self.captions(file)
        #expect(cues.count == 45 && cues.allSatisfy { $0.hasSuffix(" UTC (arrival)") }, "\(cues.count) cues: \(cues.prefix(2))")
        // The start time, UTC, in the container's own field: between the run's start and end.
        let (_, tags, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format_tags=creation_time",
                                                                "-of", "default=nw=1:nk=1", file])
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let started = try #require(f.date(from: tags.trimmingCharacters(in: .whitespacesAndNewlines)), "creation_time: '\(tags)'")
        #expect(started >= before.addingTimeInterval(-1) && started <= after, "\(started) within the run")
        if container == "mkv" {
            let (mrc, json, merr) = try Fixtures.run("/usr/bin/mkvmerge", ["-J", file])
            #expect(mrc == 0 && json.contains("\"codec\": \"AVC/H.264/MPEG-4p10\"") && json.contains("date_utc"), "mkvmerge: \(json) \(merr)")
        }
    }

    /// A live pattern stamps each picture's capture time (ST 0604 SEI): the recording's time
    /// stamps are those instants, not a frame rate; a pause in the stream stays a pause.
    @Test func timeStampsAreTheCaptureTimesAndAPauseStays() throws {
        let port = try Sender.freeUDPPort()
        let file = Self.temporary("live.mkv")
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "3",
                                                               "--record", file, "--latency-log", file + ".csv"])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        for _ in 0..<2 {   // two bursts of 1 s with a pause of at least 1.5 s between them
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--size", "320x240",
                                                                          "--duration", "1"])
            try #require(rc == 0, "\(err)")
            Sender.pace(micros: 1_500_000)   // the pause under test: the sender pauses
        }
        let (status, _) = play.wait()
        #expect(status == 0)
        let pts = try Self.packets(file).map(\.pts)
        let cues = try Self.captions(file)
        #expect(cues.count == pts.count && cues.allSatisfy { $0.contains(" UTC · capture to arrival ") && $0.hasSuffix(" ms") },
                "each picture's caption gives its capture time and how long it took to arrive: \(cues.prefix(2))")
        try #require(pts.count >= 50, "\(pts.count) pictures recorded")
        let gaps = zip(pts.dropFirst(), pts).map { $0 - $1 }
        let pause = try #require(gaps.max())
        #expect(pause >= 1.4, "the pause between the senders is in the file: \(pause) s")
        // Within a burst, the gaps are the capture times' (the latency log's), to Matroska's 1 ms.
        let log = try String(contentsOfFile: file + ".csv", encoding: .utf8).split(separator: "\n")
        let header = log[0].split(separator: ",").map(String.init)
        let col = try #require(header.firstIndex(of: "capture_wall_us"), "\(header)")
        let captures = log.dropFirst().compactMap { Double($0.split(separator: ",", omittingEmptySubsequences: false)[col]) }.map { $0 / 1e6 }
        try #require(captures.count == pts.count, "one latency line per recorded picture")
        for (i, (a, b)) in zip(pts, captures).enumerated() {
            #expect(abs((a - pts[0]) - (b - captures[0])) <= 0.0015, "picture \(i): \(a - pts[0]) s in the file, captured at +\(b - captures[0]) s")
        }
    }

    /// `spyglass send pattern --mpegts --klv …` (1 s) recorded live by `spyglass play` into a new
    /// temporary file named `name`; returns its path.
    static func recordKLVFeed(_ name: String) throws -> String {
        let port = try Sender.freeUDPPort()
        let file = temporary(name)
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2", "--record", file])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--mpegts",
                                                                      "--klv", "47.3977,8.5456,500,90", "--size", "320x240", "--duration", "1"])
        try #require(rc == 0, "\(err)")
        _ = play.wait()
        return file
    }

    /// A STANAG 4609-style feed (MPEG-TS with MISB ST 0601 KLV): each picture's caption gives the
    /// platform's position, altitude and heading, as DJI's subtitles do.
    @Test func theCaptionsCarryTheKLVPosition() throws {
        let file = try Self.recordKLVFeed("klv.mkv")
        let cues = try Self.captions(file)
        let placed = cues.filter { $0.hasSuffix(" · 47.397700, 8.545600, 500 m, heading 90.0°") }
        #expect(cues.count >= 25 && placed.count >= cues.count - 1, "\(placed.count) of \(cues.count) cues give the position: \(cues.prefix(2))")
    }

    /// The same feed recorded to MPEG-TS keeps its KLV as a data stream (stream type 0x15):
    /// ffprobe sees it, and Spyglass's own probe reads the platform back from the recording.
    @Test func aTSRecordingKeepsTheKLV() throws {
        let file = try Self.recordKLVFeed("klv.ts")
        let (_, streams, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", file])
        #expect(streams.contains("klv"), "a KLV data stream: \(streams)")
        let (_, probed, _) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", file])
        #expect(probed.contains("platform 47.397700, 8.545600, 500 m, heading 90.0°"), "\(probed)")
    }

    /// A sender that changes codec: a container's track has one, so the recording goes on in a
    /// new file (`NAME-001.mkv`), each whole and of its own codec.
    @Test func aCodecChangeStartsANewFile() throws {
        let port = try Sender.freeUDPPort()
        let file = Self.temporary("change.mkv")
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "3", "--record", file])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        for codec in ["h264", "h265"] {
            // RTP: a parameter set of the other codec switches the receiver (raw Annex B keeps the first codec).
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--rtp", "--codec", codec,
                                                                          "--size", "320x240", "--duration", "1"])
            try #require(rc == 0, "\(err)")
        }
        let (status, err) = play.wait()
        #expect(status == 0 && err.contains("recording goes on in a new file"), "\(err)")
        let second = String(file.dropLast(4)) + "-001.mkv"
        for (path, codec) in [(file, "h264"), (second, "hevc")] {
            let (_, out, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name",
                                                                   "-of", "csv=p=0", path])
            #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == codec, "\(path): \(out)")
            #expect(try Self.packets(path).count > 20, "\(path) holds its pictures")
        }
    }

    /// `kill -9` while recording: the file still opens, and holds every picture but those of the
    /// last second (Matroska's cluster, MP4's fragment) and the one held for a repair.
    @Test(arguments: ["mkv", "mp4", "ts"])
    func killNineLosesAtMostTheLastSecond(container: String) throws {
        let capture = Fixtures.capture("test/h264-baseline.h264")
        let aus = Sender.accessUnits(of: try Fixtures.bytes(capture))
        let port = try Sender.freeUDPPort()
        let file = Self.temporary("killed.\(container)")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Fixtures.spyglassBinary)
        let http = try Sender.freeTCPPort()
        p.arguments = ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--quiet", "--record", file, "--timeout", "30",
                       "--metrics", "127.0.0.1:\(http)"]
        p.standardError = FileHandle.nullDevice
        try Fixtures.launch(p)
        try #require(Wait.until { Fixtures.udpPortIsBound(port) || !p.isRunning } && p.isRunning, "spyglass listens")
        // 3 passes of the capture's 45 pictures at 30 a second: 4.5 s.
        var sent = 0
        for _ in 0..<3 {
            for au in aus {
                Sender.udp(port: port, datagrams: Sender.randomCuts(au, sizes: 1400...1400, seed: UInt64(sent)))
                sent += 1
                Sender.pace(micros: 33_333)
            }
        }
        // Every picture but the last (it ends only with the next) has been taken in.
        let decoded = { MetricsEndpointTests.fetch("http://127.0.0.1:\(http)/metrics")?.split(separator: "\n")
            .first { $0.hasPrefix("spyglass_frames_decoded_total{") }.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0 }
        #expect(Wait.until { decoded() >= sent - 1 }, "\(decoded()) of \(sent) pictures decoded before the kill")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let got = try Self.packets(file)
        #expect(got.count >= sent - 31 - 1, "\(container): \(got.count) of \(sent) pictures survive the kill")
        if container == "mkv" {
            let (mrc, _, merr) = try Fixtures.run("/usr/bin/mkvmerge", ["-J", file])
            #expect(mrc == 0 || mrc == 1, "mkvmerge identifies the killed file: \(merr)")
        }
        #expect(try Self.gstreamerReads(file), "GStreamer's demuxer reads the killed \(container)")
        if container == "mp4" {
            let (mrc, out, merr) = try Fixtures.run("/usr/bin/mpv", ["--no-config", "--vo=null", "--ao=null", "--untimed", file], timeoutSeconds: 60)
            #expect(mrc == 0 && out.contains("VO: [null]") && out.contains("End of file"), "mpv plays the killed mp4: \(out.suffix(300)) \(merr)")
        }
        // `spyglass repair`: the same pictures in a whole file, with its duration (and Matroska's Cues).
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["repair", file])
        let repaired = ContainerRepair.outputPath(for: file)
        #expect(rc == 0 && out.contains(repaired), "\(out)\(err)")
        #expect(try Self.packets(repaired).count == got.count, "every picture of the killed file")
        let (_, duration, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", repaired])
        #expect(Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "a duration: '\(duration)'")
        if container == "mkv" {
            let (_, info, _) = try Fixtures.run("/usr/bin/mkvinfo", ["-a", repaired])
            #expect(info.contains("Cue point"), "Cues: the file seeks again")
        }
    }
}
