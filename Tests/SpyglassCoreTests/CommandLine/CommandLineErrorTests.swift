import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassCore

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
}
