import Foundation
import SpyglassTransport

/// The vehicle's state in a recording's per-picture caption (issue 20's subtitle track, as DJI
/// and QGroundControl write theirs): flight mode and armed state, altitude above home, ground
/// speed, battery and position, while the telemetry is at most 2 s old
/// (`LOITER ARMED · ALT 42.5 m · GS 5.2 m/s · BAT 15.8 V 76% · 47.398012, 8.546125`).
public enum TelemetryCaption {
    /// The caption's telemetry part, or nil when there is none fresh enough.
    /// - Parameters: t: the state; nowMicros: now on its arrival clock.
    public static func text(_ t: Telemetry, nowMicros: UInt64) -> String? {
        guard let age = t.messageAgeMicros(nowMicros: nowMicros), age <= 2_000_000 else { return nil }
        var parts: [String] = []
        if let m = t.modeName?.value { parts.append(m + (t.armed.map { $0.value ? " ARMED" : " DISARMED" } ?? "")) }
        if let a = t.altitudeAboveHome?.value { parts.append(String(format: "ALT %.1f m", a)) }
        if let g = t.groundSpeed?.value { parts.append(String(format: "GS %.1f m/s", g)) }
        if let v = t.batteryVolts?.value {
            parts.append(String(format: "BAT %.1f V", v) + (t.batteryRemaining.map { String(format: " %.0f%%", $0.value * 100) } ?? ""))
        }
        if let p = t.position?.value { parts.append(String(format: "%.6f, %.6f", p.latitude, p.longitude)) }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }
}
