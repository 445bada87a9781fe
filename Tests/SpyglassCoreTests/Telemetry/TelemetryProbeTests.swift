import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `spyglass probe --mavlink`: a real vehicle's stream (tools/mavlink-vehicle) with bad input
/// mixed in (garbage, a frame with a wrong CRC, a truncated frame, a second vehicle) is
/// summarised with each drop counted, never a crash or a hang.
@Suite struct TelemetryProbeTests {
    @Test func aDamagedLinkIsSummarisedWithItsDropsCounted() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mavprobe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (name, args) in [("one", ["--count", "20"]), ("two", ["--count", "5", "--sysid", "2"])] {
            let (rc, _, err) = try Fixtures.run(TelemetryFeedTests.python, [TelemetryFeedTests.vehicle, "--out", "\(dir)/\(name).bin", "--rate", "1000"] + args)
            try #require(rc == 0, "tools/mavlink-vehicle (run tools/setup): \(err)")
        }
        let one = try Fixtures.bytes("\(dir)/one.bin"), two = try Fixtures.bytes("\(dir)/two.bin")
        var badCRC = Array(one.prefix(40)); badCRC[badCRC.count - 1] ^= 0xFF
        let garbage = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let stream = one + garbage + badCRC + two + Array(one.prefix(30))
        let port = try Sender.freeUDPPort()
        let probe = try Fixtures.start("/bin/sh", ["-c", "exec \"$0\" probe --mavlink udp://127.0.0.1:\(port) --duration 3 > \"$1\"",
                                                   Fixtures.spyglassBinary, "\(dir)/probe.txt"])
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "probe listens")
        Sender.udp(port: port, datagrams: stride(from: 0, to: stream.count, by: 256).map { Array(stream[$0..<min(stream.count, $0 + 256)]) })
        let (status, _) = probe.wait(timeoutSeconds: 30)
        #expect(status == 0)
        let out = try String(contentsOfFile: "\(dir)/probe.txt", encoding: .utf8)
        #expect(out.contains("system 1 component 1, ArduPilot, quadrotor, armed, mode LOITER"), "\(out)")
        let errors = try #require(out.split(separator: "\n").first { $0.contains("CRC errors") }.map(String.init), "\(out)")
        let numbers = errors.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // crc errors, unknown, bytes skipped, good frames, other vehicle
        #expect(numbers.count == 5 && numbers[0] >= 1 && numbers[2] > 0 && numbers[4] >= 5, "each drop counted: \(errors)")
    }
}
