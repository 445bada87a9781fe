import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// Bad input gives a clear one-line error and a non-zero exit.
@Suite struct CommandLineErrorTests {
    private func play(_ args: [String]) throws -> (Int32, String) {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play"] + args + ["--display", "none"])
        return (rc, err.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func missingFile() throws {
        let (rc, err) = try play(["/nonexistent/video.h264"])
        #expect(rc != 0)
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(err.contains("No such file"), "\(err)")
    }

    @Test func fileWithNoVideo() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("novideo-\(getpid()).h264")
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 | 1) }).write(to: url)
        let (rc, err) = try play([url.path])
        #expect(rc != 0)
        #expect(err.contains("no H.264/H.265 video found"), "\(err)")
    }

    @Test func portAlreadyInUse() throws {
        let holder = try UDPSource(host: "127.0.0.1", port: 0)
        let (rc, err) = try play(["udp://127.0.0.1:\(holder.boundPort)"])
        #expect(rc != 0)
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(err.contains("already in use"), "\(err)")
        holder.close()
    }

    @Test func unknownScheme() throws {
        let (rc, err) = try play(["rtmp://example/live"])
        #expect(rc != 0)
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(err.contains("unknown URL scheme 'rtmp'"), "\(err)")
    }

    @Test func sourceURLForms() throws {
        #expect((try SourceURL(parsing: "udp://:5600")) == .udp(host: nil, port: 5600))
        #expect((try SourceURL(parsing: "udp://239.0.0.1:5600")) == .udp(host: "239.0.0.1", port: 5600))
        #expect((try SourceURL(parsing: "tcp://pi.local:8554")) == .tcpConnect(host: "pi.local", port: 8554))
        #expect((try SourceURL(parsing: "tcp://:8554?listen")) == .tcpListen(host: nil, port: 8554))
        #expect((try SourceURL(parsing: "tcp://[::1]:8554?listen")) == .tcpListen(host: "::1", port: 8554))
        #expect((try SourceURL(parsing: "-")) == .stdin)
        #expect((try SourceURL(parsing: "clip.hevc")) == .file(path: "clip.hevc"))
        #expect(throws: (any Error).self) { try SourceURL(parsing: "udp://:0") }
        #expect(throws: (any Error).self) { try SourceURL(parsing: "udp://:99999") }
    }

    @Test func summaryJSON() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(getpid()).json").path
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-aud.h264"),
            "--display", "none", "--untimed", "--summary", out])
        #expect(rc == 0, "\(err)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        #expect(json?["framesDecoded"] as? Int == 30)
        #expect(json?["accessUnits"] as? Int == 30)
        #expect(json?["decodeErrors"] as? Int == 0)
        #expect(err.contains("30 frames decoded, 30 displayed, 0 dropped; 0 decode errors"), "\(err)")
    }

    @Test func frameLimit() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-baseline.h264"),
            "--display", "none", "--untimed", "--frames", "10"])
        #expect(rc == 0)
        #expect(err.contains("10 frames decoded"), "\(err)")
    }

    @Test func aSchemeWithoutItsSlashesNamesTheURLMeant() throws {
        let (rc, err) = try play(["udp:/5600"])
        #expect(rc != 0)
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(err.contains("did you mean udp://:5600?"), "\(err)")
        #expect(!err.contains("No such file"), "\(err)")
        #expect(SourceURL.withSlashes("tcp:/10.0.0.2:5000") == "tcp://10.0.0.2:5000")
        #expect(SourceURL.withSlashes("clips/udp.h264") == nil)
    }

    @Test func aPortWithoutItsColonNamesTheURLMeant() throws {
        let (rc, err) = try play(["udp://27600"])
        #expect(rc != 0)
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(err.contains("did you mean udp://:27600?"), "\(err)")
        #expect(throws: SourceURL.ParseError.portWithoutColon("tcp://5000", meant: "tcp://:5000")) { try SourceURL(parsing: "tcp://5000") }
        #expect(throws: SourceURL.ParseError.badAddress("udp://cam")) { try SourceURL(parsing: "udp://cam") }
    }

    @Test func aSenderWithNoHostSaysWhereItSends() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://:27700", "--size", "160x96", "--duration", "0.2"])
        #expect(rc == 0, "\(err)")
        #expect(err.contains("udp://:27700 names no host: sending to 127.0.0.1:27700"), "\(err)")
    }

    @Test func aMistypedCommandGetsDidYouMean() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["plya", "udp://:5600"])
        #expect(rc == 2)
        #expect(err.contains("unknown command 'plya' (did you mean play?)"), "\(err)")
    }

    @Test func everyCommandSuggestsItsOwnOptions() throws {
        for (command, typo, meant) in [("send", "--mpgts", "--mpegts"), ("bench", "--traget-ms", "--target-ms"), ("probe", "--jsn", "--json")] {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, [command, typo])
            #expect(rc == 2)
            #expect(err.contains("(did you mean \(meant)?)"), "\(command): \(err)")
        }
    }

    @Test func versionNamesTheLoadedLibraries() throws {
        let (rc, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["--version"])
        #expect(rc == 0)
        #expect(out.hasPrefix("spyglass \(BuildInfo.version)"), "\(out)")
        #expect(out.contains("libavcodec "), "\(out)")
        #expect(out.contains("SDL 2."), "\(out)")
    }

    @Test func helpListsTheReplayKeys() throws {
        let (_, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "--help"])
        #expect(out.contains("Replay keys: space pause"), "\(out)")
    }

    /// `send` checks that its options go together before it connects (a refused connection hid
    /// "--rtp needs a udp:// destination"), and a send that could send nothing is an error.
    @Test(arguments: [(["pattern", "tcp://127.0.0.1:1", "--rtp"], "--rtp needs a udp:// destination"),
                      (["pattern", "tcp://127.0.0.1:1", "--klv", "1,2,3,4"], "--klv needs --mpegts"),
                      (["pattern", "udp://127.0.0.1:9", "--rtp", "--mpegts"], "--rtp and --mpegts: choose one"),
                      (["pattern", "udp://255.255.255.255:5000", "--duration", "0.3", "--size", "160x96"], "nothing could be sent")])
    func sendSaysWhatIsWrongBeforeItConnects(args: [String], says: String) throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send"] + args)
        #expect(rc == 1, "\(err)")
        #expect(err.contains(says), "\(err)")
    }

    /// `send FILE.ts` sent MPEG-TS bytes as Annex B (every picture concealed at the receiver) and
    /// exited 0: now it says what the file is, in one line.
    @Test func sendRefusesAnMPEGTSFile() throws {
        let ts = FileManager.default.temporaryDirectory.appendingPathComponent("send-\(getpid())-\(UUID().uuidString).ts").path
        defer { unlink(ts) }
        let (mux, _, muxErr) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", Fixtures.capture("test/h264-baseline.h264"),
                                                                 "-c", "copy", "-f", "mpegts", "-y", ts])
        try #require(mux == 0, "\(muxErr)")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", ts, "udp://127.0.0.1:9"])
        #expect(rc == 1 && err.contains("an MPEG-TS file"), "\(err)")
    }
}
