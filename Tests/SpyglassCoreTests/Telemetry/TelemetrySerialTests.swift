import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--mavlink serial://`: a telemetry radio is a tty. A pseudo-terminal stands in for it (its
/// path a symlink, as udev's /dev/serial/by-id names are): frames come, the radio is unplugged
/// (the pty's master closes and a new pty takes the name), and the link opens it again with
/// backoff and reads on, saying how often it reopened. The radio is tools/serial-radio.
@Suite struct TelemetrySerialTests {
    static let radio = Fixtures.root.appendingPathComponent("tools/serial-radio").path

    @Test func aRadioThatGoesAwayIsOpenedAgain() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("serial-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (rc, _, err) = try Fixtures.run(TelemetryFeedTests.python, [TelemetryFeedTests.vehicle, "--out", "\(dir)/frames.bin", "--rate", "1000", "--count", "30"])
        try #require(rc == 0, "tools/mavlink-vehicle (run tools/setup): \(err)")
        let link = "\(dir)/ttyRadio"
        let radio = try Fixtures.start("/usr/bin/python3", [Self.radio, link, "\(dir)/frames.bin"])
        try #require(Wait.until { FileManager.default.fileExists(atPath: link) }, "the radio is plugged in")
        let (status, out, playErr) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", "--mavlink", "serial://\(link)?baud=57600", "--duration", "6"])
        _ = radio.wait(timeoutSeconds: 30)
        #expect(status == 0, "\(playErr)")
        #expect(out.contains("system 1 component 1, ArduPilot"), "\(out)")
        let good = out.split(separator: "\n").first { $0.contains("frames good") }.flatMap { line in
            line.split(separator: ",").first { $0.contains("frames good") }.flatMap { Int($0.split(separator: " ").first ?? "") } } ?? 0
        #expect(good > 100, "frames from both plugs: \(out)")
        #expect(playErr.contains("open again"), "the link says it reopened the radio: \(playErr)")
    }
}
