import Foundation
import Testing
@testable import SpyglassBitstream
@testable import SpyglassFeed

/// `--join show`: a stream joined after its only IDR (a link with no way back for a keyframe
/// request) shows its concealed pictures at once, marked damaged, exactly as libavcodec decodes
/// them with `-flags output_corrupt -flags2 showall`; `--join wait` (the default) shows none
/// until a clean picture.
@Suite struct JoinShowTests {
    /// 60 pictures of x264 with one IDR, joined at the 11th: its SPS and PPS, then pictures 11–60.
    static func joinedStream() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("join-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let full = dir.appendingPathComponent("full.h264").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                               "-frames:v", "60", "-c:v", "libx264", "-preset", "ultrafast",
                                                               "-g", "1000", "-bf", "0", "-f", "h264", "-y", full])
        try #require(rc == 0, "ffmpeg: \(err)")
        var scanner = AnnexBScanner()
        var units: [NALUnit] = []
        _ = scanner.push(try Fixtures.bytes(full), arrivalMicros: 0) { units.append($0) }
        _ = scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0) }
        let type = { (u: NALUnit) in u.bytes[0] & 0x1F }
        let sets = units.filter { type($0) == 7 || type($0) == 8 }
        let slices = units.indices.filter { (1...5).contains(type(units[$0])) }
        try #require(slices.count == 60 && units.filter { type($0) == 5 }.count == 1, "one IDR in 60 pictures")
        var out: [UInt8] = []
        for u in sets + units[slices[10]...] { out += [0, 0, 0, 1] + u.bytes }
        let joined = dir.appendingPathComponent("joined.h264").path
        try Data(out).write(to: URL(fileURLWithPath: joined))
        return joined
    }

    @Test func showGivesEveryPictureAtOnceMarkedDamagedAsFFmpegDecodesThem() throws {
        let path = try Self.joinedStream()
        let r = try Harness.decodeFile(path) { $0.join = .show }
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-flags", "output_corrupt", "-flags2", "showall",
                                                                 "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        try #require(rc == 0, "ffmpeg: \(err)")
        let expected = Fixtures.parseFrameMD5(out)
        #expect(r.hashes.count == 50, "every picture from the join on")
        #expect(r.hashes == expected, "the pictures libavcodec conceals, as ffmpeg shows them")
        #expect(r.damaged.first == true, "the first one is marked damaged")
    }

    @Test func waitShowsNothingBeforeACleanPicture() throws {
        let r = try Harness.decodeFile(try Self.joinedStream())
        #expect(r.hashes.isEmpty, "no IDR, no recovery point in the 50 pictures: \(r.hashes.count) shown")
        #expect(r.summary.skippedBeforeRandomAccess == 50)
    }
}
