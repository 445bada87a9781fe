import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassCore

/// Bad input gives a clear one-line error and a non-zero exit.
final class CommandLineErrorTests: XCTestCase {
    private func play(_ args: [String]) throws -> (Int32, String) {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play"] + args + ["--display", "none"])
        return (rc, err.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func testMissingFile() throws {
        let (rc, err) = try play(["/nonexistent/video.h264"])
        XCTAssertNotEqual(rc, 0)
        XCTAssertEqual(err.split(separator: "\n").count, 1, err)
        XCTAssertTrue(err.contains("No such file"), err)
    }

    func testFileWithNoVideo() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("novideo-\(getpid()).h264")
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 | 1) }).write(to: url)
        let (rc, err) = try play([url.path])
        XCTAssertNotEqual(rc, 0)
        XCTAssertTrue(err.contains("no H.264/H.265 video found"), err)
    }

    func testPortAlreadyInUse() throws {
        let holder = try UDPSource(host: "127.0.0.1", port: 0)
        let (rc, err) = try play(["udp://127.0.0.1:\(holder.boundPort)"])
        XCTAssertNotEqual(rc, 0)
        XCTAssertEqual(err.split(separator: "\n").count, 1, err)
        XCTAssertTrue(err.contains("already in use"), err)
        holder.close()
    }

    func testUnknownScheme() throws {
        let (rc, err) = try play(["rtmp://example/live"])
        XCTAssertNotEqual(rc, 0)
        XCTAssertEqual(err.split(separator: "\n").count, 1, err)
        XCTAssertTrue(err.contains("unknown URL scheme 'rtmp'"), err)
    }

    func testSourceURLForms() throws {
        XCTAssertEqual(try SourceURL(parsing: "udp://:5600"), .udp(host: nil, port: 5600))
        XCTAssertEqual(try SourceURL(parsing: "udp://239.0.0.1:5600"), .udp(host: "239.0.0.1", port: 5600))
        XCTAssertEqual(try SourceURL(parsing: "tcp://pi.local:8554"), .tcpConnect(host: "pi.local", port: 8554))
        XCTAssertEqual(try SourceURL(parsing: "tcp://:8554?listen"), .tcpListen(host: nil, port: 8554))
        XCTAssertEqual(try SourceURL(parsing: "tcp://[::1]:8554?listen"), .tcpListen(host: "::1", port: 8554))
        XCTAssertEqual(try SourceURL(parsing: "-"), .stdin)
        XCTAssertEqual(try SourceURL(parsing: "clip.hevc"), .file(path: "clip.hevc"))
        XCTAssertThrowsError(try SourceURL(parsing: "udp://:0"))
        XCTAssertThrowsError(try SourceURL(parsing: "udp://:99999"))
    }

    func testSummaryJSON() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("summary-\(getpid()).json").path
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-aud.h264"),
            "--display", "none", "--untimed", "--summary", out])
        XCTAssertEqual(rc, 0, err)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        XCTAssertEqual(json?["framesDecoded"] as? Int, 30)
        XCTAssertEqual(json?["accessUnits"] as? Int, 30)
        XCTAssertEqual(json?["decodeErrors"] as? Int, 0)
        XCTAssertTrue(err.contains("30 frames decoded, 30 displayed, 0 dropped; 0 decode errors"), err)
    }

    func testFrameLimit() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-baseline.h264"),
            "--display", "none", "--untimed", "--frames", "10"])
        XCTAssertEqual(rc, 0)
        XCTAssertTrue(err.contains("10 frames decoded"), err)
    }
}
