import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline

/// Joining a stream whose intra pictures are not IDR and carry no recovery point: it plays from
/// its first I picture, bit-exact with ffmpeg.
@Suite struct IntraJoinTests {
    /// x264 with open GOPs writes non-IDR I pictures (with a recovery point SEI, removed here);
    /// the stream is cut at the second one, as a recording cut in the middle would be.
    static func streamStartingAtANonIDRIPicture() throws -> String {
        // Its own folder per call: the tests run in parallel.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("intra-join-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let full = "\(dir)/open-gop.h264"
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-frames:v", "60", "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2",
                                                                 "-g", "15", "-x264-params", "scenecut=0:open-gop=1", full])
        try #require(rc == 0, "\(err)")
        var scanner = AnnexBScanner()
        var units: [[UInt8]] = []
        scanner.push(try Fixtures.bytes(full), arrivalMicros: 0) { units.append($0.bytes) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        let spsAt = units.indices.filter { units[$0][0] & 0x1F == 7 }
        try #require(spsAt.count >= 2)
        var out: [UInt8] = []
        var firstSlice: UInt8?
        for u in units[spsAt[1]...] {
            if u[0] & 0x1F == 6 && RandomAccessGate.hasRecoveryPoint(u, codec: .h264) { continue }
            if firstSlice == nil, (1...5).contains(u[0] & 0x1F) { firstSlice = u[0] & 0x1F }
            out += [0, 0, 0, 1] + u
        }
        try #require(firstSlice == 1, "the cut starts at a non-IDR slice")
        let cut = "\(dir)/cut.h264"
        try Data(out).write(to: URL(fileURLWithPath: cut))
        return cut
    }

    @Test func aFileStartingAtANonIDRIPicturePlaysBitExact() throws {
        let cut = try Self.streamStartingAtANonIDRIPicture()
        let expected = try Fixtures.ffmpegFrameMD5(cut)
        try #require(expected.count > 30)
        let got = try Harness.decodeFile(cut)
        #expect(got.hashes == expected)
    }

    @Test func aPipeStartingAtANonIDRIPicturePlaysBitExact() throws {
        let cut = try Self.streamStartingAtANonIDRIPicture()
        let expected = try Fixtures.ffmpegFrameMD5(cut)
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "-", "--display", "none", "--untimed", "--framemd5", "/dev/stdout"],
                                              stdin: try Data(contentsOf: URL(fileURLWithPath: cut)))
        #expect(rc == 0, "\(err)")
        #expect(Fixtures.parseFrameMD5(out) == expected)
    }

    /// x265 writes a picture forced to I inside its minimum keyframe interval as a plain I picture:
    /// TRAIL_R NAL units with I slices, no IRAP type and no recovery point (ffmpeg's libx265 passes
    /// `-force_key_frames` as X265_TYPE_I). The stream is cut there, keeping the VPS/SPS/PPS.
    static func h265StreamStartingAtANonIRAPIPicture() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("intra-join-265-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let full = "\(dir)/forced-i.h265"
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-frames:v", "60", "-force_key_frames", "expr:eq(n,20)", "-c:v", "libx265",
                                                                 "-preset", "ultrafast", "-x265-params",
                                                                 "keyint=200:min-keyint=200:scenecut=0:bframes=0:log-level=error", full])
        try #require(rc == 0, "\(err)")
        // Which picture is the I picture, in decoding order, by ffprobe (not by our own parser).
        let (prc, probe, perr) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_frames", "-show_entries", "frame=pict_type,key_frame",
                                                                       "-of", "csv=p=0", full])
        try #require(prc == 0, "\(perr)")
        let frames = probe.split(separator: "\n").map { $0.split(separator: ",").prefix(2).joined(separator: ",") }
        let cutAt = try #require(frames.indices.first { $0 > 0 && frames[$0] == "0,I" }, "x265 wrote a non-key I picture")
        var scanner = AnnexBScanner()
        var units: [[UInt8]] = []
        scanner.push(try Fixtures.bytes(full), arrivalMicros: 0) { units.append($0.bytes) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        let type = { (u: [UInt8]) in (u[0] >> 1) & 0x3F }
        let slices = units.indices.filter { type(units[$0]) < 32 }
        try #require(slices.count == frames.count, "one slice per picture")
        var out: [UInt8] = []
        for u in units where (32...34).contains(type(u)) { out += [0, 0, 0, 1] + u }     // VPS, SPS, PPS
        for u in units[slices[cutAt]...] { out += [0, 0, 0, 1] + u }
        try #require(type(units[slices[cutAt]]) == 1, "the cut starts at a TRAIL_R picture")
        let cut = "\(dir)/cut.h265"
        try Data(out).write(to: URL(fileURLWithPath: cut))
        return cut
    }

    @Test func anH265FileStartingAtANonIRAPIPicturePlaysBitExact() throws {
        let cut = try Self.h265StreamStartingAtANonIRAPIPicture()
        let expected = try Fixtures.ffmpegFrameMD5(cut)
        try #require(expected.count == 40)
        let got = try Harness.decodeFile(cut)
        #expect(got.hashes == expected)
        #expect(got.damaged.allSatisfy { !$0 }, "nothing before the join is referenced")
    }
}
