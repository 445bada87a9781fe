import Foundation
import SpyglassFeed
import SpyglassIngest
import SpyglassTransport

/// `spyglass probe --mavlink URL`: listens to a MAVLink input for the probe's duration (beside a
/// video source, or alone) and summarises it: the vehicle (system, type, autopilot, armed state,
/// mode), each message's rate, and what was dropped (CRC errors, unknown messages, skipped bytes,
/// frames of a second vehicle).
public final class TelemetryProbe {
    private let link: TelemetryLink
    private let started = Date()

    private let duration: Double

    /// Opens the endpoint and starts listening for `duration` seconds.
    /// - Throws: ``SourceError/open(_:)`` when it cannot be opened (port in use, no device).
    public init(endpoint: MAVLinkEndpoint, duration: Double) throws {
        link = try TelemetryLink(endpoint: endpoint, tlogPath: nil)
        self.duration = duration
        link.start()
    }

    /// The summary for `--json`.
    public struct Report: Codable, Sendable {
        public var endpoint: String
        public var seconds: Double
        public var systemID: Int?, componentID: Int?
        public var autopilot: String?, vehicleType: String?, mode: String?
        public var armed: Bool?
        /// Messages a second over the listening time, by name.
        public var messageRates: [String: Double]
        public var framesGood: Int, crcErrors: Int, unknownMessages: Int, bytesSkipped: Int, otherVehicleFrames: Int
    }

    /// Stops listening and returns the summary: lines in probe's layout, and the report.
    /// Waits out the rest of the duration first (a file beside it is read in less).
    public func finish() -> (lines: [String], report: Report) {
        let left = duration - Date().timeIntervalSince(started)
        if left > 0 { Thread.sleep(forTimeInterval: left) }
        link.stop()
        let t = link.telemetry, c = link.counters
        let seconds = Date().timeIntervalSince(started)
        var lines = [String(format: "mavlink               %@, %.1f s", link.endpoint.description, seconds)]
        lines.append("  vehicle             " + Self.vehicle(t) + (t.systemID == nil && t.framesBeforeLock > 0 ? " (\(t.framesBeforeLock) frames came without one)" : ""))
        // Over the whole listening time: a burst of three in one datagram is not 100,000 a second.
        let rates = t.messageStats.sorted { $0.key < $1.key }.map { id, s in
            "\(Self.messageName(id)) " + (s.count > 1 ? String(format: "%.1f/s", Double(s.count) / seconds) : "1×")
        }
        lines.append("  messages            " + (rates.isEmpty ? "none" : rates.joined(separator: ", ")))
        lines.append("  errors              \(c.crcErrors) CRC errors, \(c.unknownMessages) unknown messages, \(c.bytesSkipped) bytes skipped"
                     + ", \(c.framesGood) frames good; \(t.otherVehicleFrames) frames from another vehicle")
        if t.systemID == nil, case .udpOut = link.endpoint { lines.append("  hint                nothing answered the heartbeats sent there: is a router listening?") }
        let report = Self.report(link, seconds: seconds)
        return (lines, report)
    }

    /// A link's summary as JSON wants it (`probe --json`'s `mavlink`, `--summary`'s `mavlink`).
    /// - Parameter seconds: how long it listened (the rates' time).
    public static func report(_ link: TelemetryLink, seconds: Double) -> Report {
        let t = link.telemetry, c = link.counters
        return Report(endpoint: link.endpoint.description, seconds: seconds, systemID: t.systemID.map(Int.init),
                      componentID: t.componentID.map(Int.init), autopilot: t.autopilot.map { autopilotName($0.value) },
                      vehicleType: t.vehicleType.map { typeName($0.value) }, mode: t.modeName?.value, armed: t.armed?.value,
                      messageRates: Dictionary(uniqueKeysWithValues: t.messageStats.map { id, s in (messageName(id), Double(s.count) / max(seconds, 0.001)) }),
                      framesGood: c.framesGood, crcErrors: c.crcErrors, unknownMessages: c.unknownMessages,
                      bytesSkipped: c.bytesSkipped, otherVehicleFrames: t.otherVehicleFrames)
    }

    private static func vehicle(_ t: Telemetry) -> String {
        guard let id = t.systemID else { return "none heard (no autopilot HEARTBEAT)" }
        var parts = ["system \(id)" + (t.componentID.map { " component \($0)" } ?? "")]
        if let a = t.autopilot?.value { parts.append(autopilotName(a)) }
        if let v = t.vehicleType?.value { parts.append(typeName(v)) }
        if let armed = t.armed?.value { parts.append(armed ? "armed" : "disarmed") }
        if let m = t.modeName?.value { parts.append("mode \(m)") }
        return parts.joined(separator: ", ")
    }

    /// MAV_AUTOPILOT (common.xml).
    static func autopilotName(_ a: UInt8) -> String {
        switch a {
        case 3: return "ArduPilot"
        case 12: return "PX4"
        case 0: return "generic autopilot"
        default: return "autopilot \(a)"
        }
    }

    /// MAV_TYPE (common.xml), the vehicles Spyglass's users fly.
    static func typeName(_ t: UInt8) -> String {
        let names: [UInt8: String] = [1: "fixed wing", 2: "quadrotor", 3: "coaxial", 4: "helicopter", 10: "ground rover",
                                      11: "surface boat", 13: "hexarotor", 14: "octorotor", 15: "tricopter", 19: "VTOL tailsitter",
                                      20: "VTOL tiltrotor", 21: "VTOL", 22: "VTOL"]
        return names[t] ?? "type \(t)"
    }

    /// The names of the messages Spyglass reads (common.xml); others by id.
    static func messageName(_ id: UInt32) -> String {
        let names: [UInt32: String] = [0: "HEARTBEAT", 1: "SYS_STATUS", 24: "GPS_RAW_INT", 30: "ATTITUDE", 33: "GLOBAL_POSITION_INT",
                                       74: "VFR_HUD", 109: "RADIO_STATUS", 147: "BATTERY_STATUS", 242: "HOME_POSITION", 253: "STATUSTEXT"]
        return names[id] ?? "id \(id)"
    }
}
