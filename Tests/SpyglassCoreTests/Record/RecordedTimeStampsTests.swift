import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassBitstream
@testable import SpyglassSession

/// A recording's time stamps as the stream arrived (issue 20): B-frames in presentation order
/// from ffmpeg's live x264/x265 and from GStreamer's RTP camera, and a stream whose rate halves.
/// Serialized, as ``ContainerRecorderTests`` is (each test encodes and sends in real time); its
/// own suite so that the test command's two processes share the recording tests.
@Suite(.serialized) struct RecordedTimeStampsTests {
    /// A stream with B-frames (x264/x265 with 2 B-frames, sent live by ffmpeg as raw Annex B):
    /// the access units come in decode order with only their arrival times, and the recording
    /// still presents each picture in output order (the picture order count), after its decode.
    /// A raw recording (`--record NAME.h264`) exported to Matroska (`spyglass export`) does too.
    /// x264's B-pyramid (3 B-frames) with 3 s between keyframes, recorded raw and exported to MP4:
    /// fragments begin between keyframes, where libavformat's own cut lost a picture's composition
    /// offset (it was shown before the B-pictures it follows).
    @Test(arguments: [("h264", "mkv"), ("h265", "ts"), ("h264", "mp4"), ("h264", "h264"), ("h264 pyramid", "h264")])
    func aBFrameStreamIsRecordedInPresentationOrder(codec: String, container: String) throws {
        let encoded = ContainerRecorderTests.temporary("b-frames.\(codec)")
        let encoder = codec == "h264" ? ["-c:v", "libx264", "-bf", "2", "-g", "30"]
            : codec == "h264 pyramid" ? ["-c:v", "libx264", "-bf", "3", "-g", "90"]
                                      : ["-c:v", "libx265", "-x265-params", "bframes=2:keyint=30:log-level=error"]
        let (erc, _, eerr) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "3"]
                                              + encoder + ["-pix_fmt", "yuv420p", "-f", codec.hasPrefix("h264") ? "h264" : "hevc", encoded])
        try #require(erc == 0, "ffmpeg encodes the stream: \(eerr)")
        let port = try Sender.freeUDPPort()
        let recorded = ContainerRecorderTests.temporary("b-frames.\(container)")
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2",
                                                               "--record", recorded])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let (src, _, serr) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-re", "-r", "30", "-i", encoded, "-c", "copy",
                                                                  "-f", codec.hasPrefix("h264") ? "h264" : "hevc", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        try #require(src == 0, "ffmpeg sends: \(serr)")
        #expect(play.wait().0 == 0)
        var file = recorded
        if recordsRawStream(recorded) {
            file = ContainerRecorderTests.temporary("b-frames-exported." + (codec == "h264 pyramid" ? "mp4" : "mkv"))
            let (xrc, said, xerr) = try Fixtures.run(Fixtures.spyglassBinary, ["export", recorded, file])
            try #require(xrc == 0, "\(said)\(xerr)")
        }
        #expect(try Fixtures.ffmpegFrameMD5(file) == Fixtures.ffmpegFrameMD5(encoded), "every picture the sender encoded, in order")
        // The decoded pictures' time stamps, in output order, rise: none is shown out of turn.
        let (_, frames, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts",
                                                                  "-of", "csv=p=0", file])
        let pts = frames.split(separator: "\n").compactMap { Int($0.split(separator: ",").first ?? "") }
        #expect(pts.count == 90 && zip(pts.dropFirst(), pts).allSatisfy { $0 > $1 }, "\(pts.count) pictures, pts \(pts.prefix(12))")
        // The packets are in decode order: some come before a picture they are shown after.
        let packets = try ContainerRecorderTests.packets(file).map(\.pts)
        #expect(zip(packets.dropFirst(), packets).contains { $0 < $1 }, "B-frames kept as such: \(packets.prefix(8))")
        // Each access unit is decoded at the time of the picture output two before its rank: the
        // dts rise a picture apart after the first few (up to the declared reorder depth + 1: x264 says 3 here; a window's earliest pts gave two access
        // units of every group of B-frames one dts, which remuxing to MPEG-TS warns of).
        if container != "mkv" && !recordsRawStream(recorded) {
            let (_, out, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                   "packet=dts_time", "-of", "csv=p=0", file])
            let dts = out.split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }
            #expect(zip(dts.dropFirst(), dts).dropFirst(4).allSatisfy { $0 - $1 > 0.005 }, "dts \(dts.prefix(12))")
        }
    }

    /// A camera's RTP with B-frames (GStreamer's x264enc with 2 B-frames, rtph264pay and rtpbin
    /// sending RTCP: tools/rtp-camera): the first pictures come before the first sender report
    /// (arrival-timed), the rest at their capture times, which go on from them. The MP4's dts
    /// rise, and its pictures in output order are presented in order: capture times on their
    /// own jumped back by the capture-to-arrival time, onto pictures already presented.
    @Test func aCaptureTimedBFrameStreamHasRisingDts() throws {
        let port = try Sender.freeUDPPort()
        let file = ContainerRecorderTests.temporary("camera-b.mp4")
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--rtp", "--display", "none",
                                                               "--timeout", "2", "--record", file])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let camera = try Fixtures.start(Fixtures.root.appendingPathComponent("tools/rtp-camera").path,
                                        ["--to", "127.0.0.1:\(port)", "--bframes", "2", "--frames", "90", "--key-int", "30"])
        #expect(camera.wait(timeoutSeconds: 60).0 == 0)
        let (prc, perr) = play.wait()
        try #require(prc == 0, "\(perr)")
        #expect(perr.contains("RTCP: "), "capture times from the sender reports: \(perr)")
        let (rc, out, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                                "packet=dts_time", "-of", "csv=p=0", file])
        try #require(rc == 0)
        let dts = out.split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }
        #expect(dts.count == 90, "\(dts.count) packets")
        #expect(zip(dts.dropFirst(), dts).allSatisfy { $0 > $1 }, "dts rises: \(dts.prefix(12))")
        let (_, frames, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts",
                                                                  "-of", "csv=p=0", file])
        let pts = frames.split(separator: "\n").compactMap { Int($0.split(separator: ",").first ?? "") }
        #expect(pts.count == 90 && zip(pts.dropFirst(), pts).allSatisfy { $0 > $1 }, "\(pts.count) pictures, pts \(pts)")
    }

    /// A live stream at 30 fps for 3 s and then 15 fps for 3 s (two `spyglass send pattern`
    /// runs, the second a sender restarted at half the rate), recorded to Matroska and MPEG-TS:
    /// ffmpeg decodes exactly the pictures Spyglass showed, the file lasts as long as the stream
    /// did (ffprobe, within 10 %) at the rate it arrived, mkvmerge and GStreamer's demuxers read
    /// it, and `spyglass replay` shows the same pictures.
    @Test(arguments: ["mkv", "ts"])
    func aStreamThatHalvesItsRateIsRecordedAsItArrived(container: String) throws {
        let port = try Sender.freeUDPPort()
        let file = ContainerRecorderTests.temporary("rate.\(container)")
        let shownPath = file + ".framemd5"
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--timeout", "2",
                                                               "--record", file, "--framemd5", shownPath])
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "spyglass listens")
        let start = Date()
        for fps in ["30", "15"] {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--size", "320x240",
                                                                          "--fps", fps, "--duration", "3"])
            try #require(rc == 0, "\(err)")
        }
        let streamSeconds = Date().timeIntervalSince(start)
        #expect(play.wait().0 == 0)
        let shown = Fixtures.parseFrameMD5(try String(contentsOfFile: shownPath, encoding: .utf8))
        try #require(shown.count >= 120, "\(shown.count) pictures shown")
        #expect(try Fixtures.ffmpegFrameMD5(file) == shown, "ffmpeg decodes exactly the pictures Spyglass showed")
        let (_, d, _) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file])
        let duration = try #require(Double(d.trimmingCharacters(in: .whitespacesAndNewlines)), "ffprobe's duration: '\(d)'")
        #expect(abs(duration - streamSeconds) <= 0.1 * streamSeconds, "the file lasts \(duration) s, the stream \(streamSeconds) s")
        // At the rate it arrived: the second half's pictures are twice as far apart.
        let pts = try ContainerRecorderTests.packets(file).map(\.pts)
        let gaps = zip(pts.dropFirst(), pts).map { $0 - $1 }
        let median = { (g: ArraySlice<Double>) -> Double in g.sorted()[g.count / 2] }
        let early = median(gaps.prefix(60)), late = median(gaps.suffix(30))
        #expect(late > 1.5 * early, "pictures \(early * 1000) ms apart at 30 fps, \(late * 1000) ms at 15 fps")
        #expect(try ContainerRecorderTests.gstreamerReads(file), "GStreamer's demuxer reads the \(container)")
        if container == "mkv" {
            let (mrc, json, merr) = try Fixtures.run("/usr/bin/mkvmerge", ["-J", file])
            #expect(mrc == 0 && json.contains("AVC/H.264"), "mkvmerge -J: \(merr)")
        }
        #expect(try ContainerPlaybackTests.played("replay", file) == shown, "spyglass replay shows the same pictures")
    }
}
