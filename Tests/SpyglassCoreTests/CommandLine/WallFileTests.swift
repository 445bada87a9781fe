import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `spyglass play --wall FILE`: bad lines get one clear line naming the file and line.
@Suite struct WallFileTests {
    private func wall(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wall-\(getpid())-\(UUID().uuidString).txt").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func play(_ text: String, _ extra: [String] = []) throws -> (Int32, String, String) {
        let path = try wall(text)
        defer { unlink(path) }
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "--wall", path] + extra)
        return (rc, path, err)
    }

    @Test("two lines that would record into one file, spelled differently, are refused before anything plays")
    func twoFeedsRecordingIntoOneFile() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-4slices.h265")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("walldup-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (rc, _, err) = try play("\(a) --record \(dir)/dup\n\(b) --record \(dir)/./dup.mkv\n", ["--display", "none", "--untimed"])
        #expect(rc == 1 && err.contains("feed 2 would write") && err.contains("which feed 1 records into"), "\(err)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/dup.mkv"), "nothing written")
    }

    @Test("an unknown option on a line names the file, the line and the per-feed options")
    func unknownOption() throws {
        let (rc, path, err) = try play("# cameras\n\nudp://:5600 name=A\nudp://:5601 --frames 3\n")
        #expect(rc == 2)
        #expect(err.contains("\(path):4: '--frames' is not a per-feed option"), "\(err)")
        #expect(err.split(separator: "\n").count == 1, "\(err)")
    }

    @Test("a bad value, a bad source, an open quote, a line without a source, two feeds recording to one path")
    func badLines() throws {
        let cases = [("udp://:5600 --codec vp9\n", ":1: --codec: 'vp9' (use auto, h264 or h265)"),
                     ("\nfoo://cam:5600\n", ":2: foo://cam:5600:"),
                     ("udp://:5600 name=\"Front door\nudp://:5601\n", ":1: a quote is not closed"),
                     ("name=X udp://:5600\n", ":1: a line starts with its SOURCE, not 'name=X'"),
                     ("udp://:5600 --record r\nudp://:5601 --record r\n", ":2: --record r is also the recording of line 1"),
                     ("udp://:5600 --target-ms 0\n", ":1: --target-ms: 0 is out of range"),
                     ("udp://:5600\nudp://:5601 --sdp /nonexistent/cam.sdp\n", ":2: --sdp: /nonexistent/cam.sdp"),
                     ("# only a comment\n", "no feed in it")]
        for (text, expected) in cases {
            let (rc, _, err) = try play(text)
            #expect(rc == 2, "\(text): \(err)")
            #expect(err.contains(expected), "\(text): \(err)")
        }
    }

    @Test("a good wall file plays: names and options per feed, comments and blank lines skipped")
    func goodWallPlays() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-4slices.h265")
        let (rc, _, err) = try play("# two files\n\n\(a)  name=\"First one\" --codec h264   # a comment\n\(b) name=Second --target-ms 150\n",
                                    ["--display", "none", "--untimed"])
        #expect(rc == 0, "\(err)")
        #expect(err.split(separator: "\n").filter { $0.contains("frames decoded") }.count == 2, "\(err)")
        #expect(err.contains("spyglass: First one (\(a)): "), "each summary is led by the feed's name: \(err)")
        #expect(err.contains("spyglass: Second (\(b)): "), "\(err)")
    }

    /// `--mavlink` per line: each feed its own telemetry (its own port); a bad URL names the line.
    @Test("--mavlink on a wall line: each feed's own telemetry, a bad URL names the line")
    func mavlinkPerFeed() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-4slices.h265")
        let ports = (try Sender.freeUDPPort(), try Sender.freeUDPPort())
        let (rc, _, err) = try play("\(a) --mavlink udp://127.0.0.1:\(ports.0)\n\(b) --mavlink udp://127.0.0.1:\(ports.1)\n", ["--display", "none", "--untimed"])
        #expect(rc == 0, "\(err)")
        #expect(err.contains("mavlink udp://127.0.0.1:\(ports.0): no vehicle heard") && err.contains("mavlink udp://127.0.0.1:\(ports.1): no vehicle heard"), "\(err)")
        let (bad, path, badErr) = try play("udp://:5600\nudp://:5602 --mavlink udp://nowhere\n")
        #expect(bad != 0 && badErr.contains("\(path):2: --mavlink udp://nowhere: no port"), "\(badErr)")
    }

    @Test("a missing wall file is one line")
    func missingFile() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "--wall", "/nonexistent/wall.txt"])
        #expect(rc == 2)
        #expect(err.contains("--wall /nonexistent/wall.txt: no such file"), "\(err)")
    }

    @Test("a folder, an endless device and an empty source are named as what they are")
    func notWallFiles() throws {
        for (path, says) in [("/tmp", "is a folder"), ("/dev/zero", "larger than 1 MiB")] {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "--wall", path])
            #expect(rc == 2 && err.contains("--wall \(path): \(says)"), "\(err)")
        }
        let (rc, path, err) = try play("\"\"\n")
        #expect(rc == 2 && err.contains("\(path):1: an empty SOURCE"), "\(err)")
    }

    @Test("a wall file written on Windows (CR LF) plays, and {n} in --record gives each feed its own file (Matroska)")
    func crlfLinesAndNumberedRecordings() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-4slices.h265")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wallrec-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (rc, _, err) = try play("\(a)\r\n\(b)\r\n", ["--display", "none", "--untimed", "--record", "\(dir)/rec{n}"])
        #expect(rc == 0, "\(err)")
        #expect(err.split(separator: "\n").filter { $0.contains("frames decoded") }.count == 2, "\(err)")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rec1.mkv") && FileManager.default.fileExists(atPath: "\(dir)/rec2.mkv"))
    }
}
