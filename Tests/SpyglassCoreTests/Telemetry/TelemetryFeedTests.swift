import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassIngest

/// A feed with MAVLink telemetry (issue 21), end to end: a pymavlink vehicle (tools/mavlink-vehicle,
/// PyPI's pymavlink in out/venv) sends at 10 Hz while `spyglass send` video plays; `/metrics`
/// gives its battery, altitude and flight mode, and the recording's `.tlog` is read back by
/// pymavlink in order and as long as the flight. Without out/venv the tests fail, naming tools/setup.
@Suite(.serialized) struct TelemetryFeedTests {
    static let python = Fixtures.root.appendingPathComponent("out/venv/bin/python").path
    static let vehicle = Fixtures.root.appendingPathComponent("tools/mavlink-vehicle").path

    struct Flight { var metrics: String; var tlog: String; var err: String; var dir: String }

    /// Plays video headless with `--mavlink`, `--metrics` and `--record`, with the vehicle
    /// `vehicleArgs` sending to the MAVLink port for 5 s; returns the metrics read once every
    /// gauge is there, the `.tlog` path and stderr.
    static func fly(_ vehicleArgs: [String], mavlinkURL: (UInt16) -> String = { "udp://127.0.0.1:\($0)" },
                    vehicleTo: (UInt16) -> String = { "udp:127.0.0.1:\($0)" }) throws -> Flight {
        try #require(FileManager.default.isExecutableFile(atPath: python), "out/venv is missing: run tools/setup")
        let video = try Sender.freeUDPPort(), mav = try Sender.freeUDPPort(), http = try Sender.freeTCPPort()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("flight-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let player = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(video)", "--display", "none",
            "--mavlink", mavlinkURL(mav), "--metrics", "127.0.0.1:\(http)", "--record", "\(dir)/flight", "--timeout", "2",
            "--summary", "\(dir)/summary.json"])
        try #require(Wait.until { Fixtures.udpPortIsBound(video) && Fixtures.tcpPortIsListening(http) }, "spyglass listens")
        let sender = try Fixtures.start(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(video)", "--duration", "6", "--size", "320x240"])
        let flight = try Fixtures.start(python, [vehicle, "--to", vehicleTo(mav), "--duration", "5"] + vehicleArgs)
        var metrics = ""
        let wanted = ["spyglass_telemetry_battery_volts{", "spyglass_telemetry_altitude_above_home_metres{", "spyglass_telemetry_flight_mode{"]
        #expect(Wait.until(timeoutSeconds: 30) {
            metrics = MetricsEndpointTests.fetch("http://127.0.0.1:\(http)/metrics") ?? ""
            return wanted.allSatisfy(metrics.contains)
        }, "the telemetry gauges appear: \(metrics.split(separator: "\n").filter { $0.contains("telemetry") })")
        _ = flight.wait(timeoutSeconds: 60)
        _ = sender.wait(timeoutSeconds: 60)
        let (status, err) = player.wait(timeoutSeconds: 60)
        #expect(status == 0, "\(err)")
        return Flight(metrics: metrics, tlog: "\(dir)/flight.tlog", err: err, dir: dir)
    }

    /// One gauge's value for the feed ("name{feed=…} value").
    static func gauge(_ metrics: String, _ name: String) -> Double? {
        metrics.split(separator: "\n").first { $0.hasPrefix(name + "{") }.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    /// pymavlink reads the `.tlog`: message count, first and last timestamp (s), and whether the
    /// timestamps never go backwards.
    static func readTLog(_ path: String) throws -> (count: Int, first: Double, last: Double, ordered: Bool) {
        let script = """
        import sys
        from pymavlink import mavutil
        m = mavutil.mavlink_connection(sys.argv[1])
        ts = []
        while True:
            msg = m.recv_match()
            if msg is None: break
            ts.append(msg._timestamp)
        print(len(ts), ts[0] if ts else 0, ts[-1] if ts else 0, int(all(a <= b for a, b in zip(ts, ts[1:]))))
        """
        let (rc, out, err) = try Fixtures.run(python, ["-c", script, path])
        try #require(rc == 0, "pymavlink: \(err)")
        let f = out.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        return (Int(f[0]) ?? 0, Double(f[1]) ?? 0, Double(f[2]) ?? 0, f[3] == "1")
    }

    @Test func anArduCopterOverMAVLink2IsInTheMetricsAndTheTLog() throws {
        let f = try Self.fly([])
        #expect(Self.gauge(f.metrics, "spyglass_telemetry_battery_volts") == 15.8)
        #expect((Self.gauge(f.metrics, "spyglass_telemetry_altitude_above_home_metres") ?? 0) >= 42.5)
        #expect(f.metrics.contains("spyglass_telemetry_flight_mode{feed=\"1 udp://127.0.0.1:") && f.metrics.contains("mode=\"LOITER\"} 1"))
        #expect(Self.gauge(f.metrics, "spyglass_telemetry_armed") == 1)
        let t = try Self.readTLog(f.tlog)
        #expect(t.count > 100 && t.ordered, "\(t)")
        #expect(t.last - t.first > 4 && t.last - t.first < 6, "the .tlog lasts as long as the 5 s flight: \(t)")
        #expect(f.err.contains("mavlink udp://127.0.0.1:") && f.err.contains("0 CRC errors"), "\(f.err)")
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(f.dir)/summary.json"))) as? [String: Any]
        let mavlink = summary?["mavlink"] as? [String: Any]
        #expect(mavlink?["mode"] as? String == "LOITER" && mavlink?["autopilot"] as? String == "ArduPilot" && (mavlink?["framesGood"] as? Int ?? 0) > 100,
                "--summary names the vehicle: \(mavlink ?? [:])")
        // The recording's subtitle track carries the vehicle's state with each picture.
        let cues = try ContainerRecorderTests.captions("\(f.dir)/flight.mkv")
        #expect(cues.contains { $0.contains("LOITER ARMED · ALT 4") && $0.contains("BAT 15.8 V 76%") }, "\(cues.suffix(2))")
    }

    /// Replay draws the `.tlog` in step: the state as of a picture's recorded time, again after a
    /// seek back; `spyglass replay` finds the `.tlog` beside the recording.
    @Test func theTLogReplaysInStepWithThePictures() throws {
        let f = try Self.fly([])
        let log = try TLogReplay(path: f.tlog)
        let span = try #require(log.span, "frames in \(f.tlog)")
        let (before, _) = log.telemetry(forPictureAt: span.lowerBound - 1)
        #expect(before.systemID == nil, "nothing before the first frame")
        let mid = span.lowerBound + (span.upperBound - span.lowerBound) / 2
        let (state, at) = log.telemetry(forPictureAt: mid)
        #expect(at == mid && state.modeName?.value == "LOITER" && (state.altitudeAboveHome?.value ?? 0) >= 42.5)
        #expect((state.lastMessageMicros ?? .max) <= mid, "no frame from after the picture")
        let (again, _) = log.telemetry(forPictureAt: span.lowerBound + 1)
        #expect((again.lastMessageMicros ?? .max) <= span.lowerBound + 1, "a seek back starts again")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", "\(f.dir)/flight.mkv", "--display", "none"])
        #expect(rc == 0 && err.contains("flight.tlog: telemetry drawn in step with the pictures"), "\(err)")
    }

    @Test func aPX4OverMAVLink1IsInTheMetrics() throws {
        let f = try Self.fly(["--autopilot", "px4", "--mavlink1"])
        #expect(Self.gauge(f.metrics, "spyglass_telemetry_battery_volts") == 15.8)
        #expect((Self.gauge(f.metrics, "spyglass_telemetry_altitude_above_home_metres") ?? 0) >= 42.5)
        #expect(f.metrics.contains("mode=\"Position\"} 1"), "\(f.metrics.split(separator: "\n").filter { $0.contains("mode") })")
        let t = try Self.readTLog(f.tlog)
        #expect(t.count > 100 && t.ordered, "\(t)")
    }

    /// udpout://: Spyglass sends a GCS HEARTBEAT to MAVProxy, which forwards the vehicle's stream
    /// to it only once it has heard one (MAVProxy's `--out udpin:` waits for its client).
    @Test func MAVProxyForwardingAVehicleIsASource() throws {
        let proxyIn = try Sender.freeUDPPort(), proxyOut = try Sender.freeUDPPort()
        let mavproxy = Fixtures.root.appendingPathComponent("out/venv/bin/mavproxy.py").path
        let proxy = try Fixtures.start(Self.python, [mavproxy, "--master", "udpin:127.0.0.1:\(proxyIn)", "--out", "udpin:127.0.0.1:\(proxyOut)",
                                                "--daemon", "--non-interactive", "--default-modules", "", "--state-basedir",
                                                FileManager.default.temporaryDirectory.path],
                                       environment: ["HOME": FileManager.default.temporaryDirectory.path])
        defer { proxy.process.terminate(); _ = proxy.wait(timeoutSeconds: 10) }
        try #require(Wait.until { Fixtures.udpPortIsBound(proxyIn) && Fixtures.udpPortIsBound(proxyOut) }, "MAVProxy listens")
        let f = try Self.fly([], mavlinkURL: { _ in "udpout://127.0.0.1:\(proxyOut)" }, vehicleTo: { _ in "udp:127.0.0.1:\(proxyIn)" })
        #expect(Self.gauge(f.metrics, "spyglass_telemetry_battery_volts") == 15.8)
        #expect(f.metrics.contains("mode=\"LOITER\"} 1"))
    }
}
