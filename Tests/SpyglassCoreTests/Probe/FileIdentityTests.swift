import Foundation
import Testing
@testable import SpyglassSession

/// Files that are not H.264/H.265 video get one line naming what they are and exit 1 (probe,
/// play, replay); H.264/H.265 in a container plays whatever its name, because libavformat's
/// probe looks at the bytes before Spyglass's own detection.
@Suite struct FileIdentityTests {
    /// ffmpeg makes each file: (name, ffmpeg output options, what the line must say).
    static let others: [(String, [String], String)] = [
        ("pic.jpg", ["-frames:v", "1"], "a JPEG image"),
        ("pic.png", ["-frames:v", "1"], "a PNG image"),
        ("clip.webm", ["-t", "1", "-c:v", "libvpx"], "VP8 in WebM"),
        ("clip.mpg", ["-t", "1", "-c:v", "mpeg2video"], "MPEG-2 video in an MPEG program stream"),
    ]

    static func make(_ name: String, _ options: [String]) throws -> String {
        let path = ContainerRecorderTests.temporary(name)
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30"]
                                            + options + [path])
        try #require(rc == 0, "ffmpeg makes \(name): \(err)")
        return path
    }

    @Test(arguments: others.indices)
    func whatIsNotH264OrH265IsNamedInOneLine(_ k: Int) throws {
        let (name, options, says) = Self.others[k]
        let path = try Self.make(name, options)
        #expect(FileIdentity.of(path) == .unsupported("\(path): \(says): Spyglass decodes H.264 and H.265 video only"))
        for command in [["probe", path], ["play", path, "--display", "none"], ["replay", path, "--display", "none"]] {
            let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, command)
            let lines = (out + err).split(separator: "\n")
            #expect(rc == 1 && lines.count == 1 && lines[0].contains(says), "\(command[0]) \(name): rc \(rc): \(out)\(err)")
        }
    }

    /// An H.264 MP4 named `.bin`: a container by its bytes, played through libavformat bit-exact.
    @Test func aContainerIsKnownByItsBytesNotItsName() throws {
        let mp4 = try Self.make("clip.mp4", ["-t", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let renamed = mp4 + ".bin"
        try FileManager.default.moveItem(atPath: mp4, toPath: renamed)
        #expect(FileIdentity.of(renamed) == .container)
        #expect(try ContainerPlaybackTests.played("play", renamed, []) == Fixtures.ffmpegFrameMD5(renamed))
        #expect(FileIdentity.of(Fixtures.capture("test/h264-baseline.h264")) == .ours, "raw Annex B stays with Spyglass's own detection")
    }
}
