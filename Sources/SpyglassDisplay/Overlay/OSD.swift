import Foundation
import SpyglassTransport

/// What the on-screen display says about the aircraft, from its ``Telemetry``: a value, rounded
/// as drawn (so that a tile is drawn again only when what it shows changes), with the tone it is
/// drawn in. Green, amber and red follow the latency chip's rules; telemetry older than
/// ``staleMicros`` is drawn grey with its age, as a stalled picture is.
public struct OSD: Equatable, Sendable {
    /// Telemetry older than this is stale: dimmed and aged (2 s, µs).
    public static let staleMicros: UInt64 = 2_000_000
    /// How long a STATUSTEXT stays on screen (6 s, µs).
    public static let statusTextMicros: UInt64 = 6_000_000

    /// Flight mode and armed state ("LOITER · ARMED").
    public var mode: OverlayLine?
    /// Altitude above home, ground speed and climb ("ALT 42.5 m", "GS 5.2 m/s", "VS +0.1 m/s").
    public var altitude: OverlayLine?, speed: OverlayLine?, climb: OverlayLine?
    /// Battery volts and percent: red under 20 %, amber under 35 %.
    public var battery: OverlayLine?
    /// GPS fix and satellites: amber without a 3D fix.
    public var gps: OverlayLine?
    /// RSSI (RADIO_STATUS) or link quality (SYS_STATUS): amber, then red, as it falls.
    public var link: OverlayLine?
    /// Distance and bearing to home ("HOME 120 m 045°").
    public var home: OverlayLine?
    /// Flight time since the first armed heartbeat ("T 03:12").
    public var flightTime: OverlayLine?
    /// The latest STATUSTEXT, for ``statusTextMicros`` (red for warnings and worse).
    public var statusText: OverlayLine?
    /// Heading, whole degrees 0–359 (the compass strip).
    public var heading: Int?
    /// Roll and pitch, whole degrees (the artificial horizon).
    public var roll: Int?, pitch: Int?
    /// "TELEMETRY 3.4 s OLD" once it is stale (tenths of a second), or "NO TELEMETRY".
    public var stale: OverlayLine?

    /// Nothing to show (no frame has come).
    public var isEmpty: Bool { mode == nil && altitude == nil && battery == nil && stale == nil }

    /// The display for `t` at `nowMicros` (monotonic µs, the pictures' clock).
    public static func of(_ t: Telemetry, nowMicros now: UInt64) -> OSD {
        var o = OSD()
        guard let age = t.messageAgeMicros(nowMicros: now) else {
            o.stale = OverlayLine("NO TELEMETRY", .warning)
            return o
        }
        let dim = age >= staleMicros
        func line(_ text: String, _ tone: OverlayLine.Tone = .plain) -> OverlayLine { OverlayLine(text, dim ? .stale : tone) }
        if let m = t.modeName?.value {
            o.mode = line(m + (t.armed.map { $0.value ? " · ARMED" : " · DISARMED" } ?? ""), t.armed?.value == true ? .good : .plain)
        }
        o.altitude = t.altitudeAboveHome.map { line(String(format: "ALT %.1f m", $0.value)) }
            ?? t.position?.value.altitudeMSL.map { line(String(format: "ALT %.0f m MSL", $0)) }
        if t.home == nil, let p = t.position?.value { o.home = line(String(format: "%.6f, %.6f", p.latitude, p.longitude)) }
        o.speed = t.groundSpeed.map { line(String(format: "GS %.1f m/s", $0.value)) }
        o.climb = t.climb.map { line(String(format: "VS %+.1f m/s", $0.value)) }
        o.battery = battery(t).map { line($0.text, $0.tone) }
        o.gps = t.gpsFixType.map { fix in
            line("GPS \(fixName(fix.value))" + (t.satellites.map { " \($0.value) sats" } ?? ""), fix.value >= 3 ? .good : .warning)
        }
        o.link = link(t).map { line($0.text, $0.tone) }
        if let d = t.distanceToHome, let b = t.bearingToHome { o.home = line(String(format: "HOME %.0f m %03.0f°", d, b)) }
        o.flightTime = t.flightTimeMicros(nowMicros: now).map { line(String(format: "T %02d:%02d", Int($0 / 60_000_000), Int($0 / 1_000_000 % 60))) }
        if let s = t.statusText, now - min(now, s.arrivalMicros) < statusTextMicros {
            o.statusText = line(s.value.text, s.value.severity <= 4 ? .bad : .plain)
        }
        o.heading = t.heading.flatMap { wholeDegrees($0.value).map { ($0 % 360 + 360) % 360 } }
        o.roll = t.roll.flatMap { wholeDegrees($0.value * 180 / .pi) }
        o.pitch = t.pitch.flatMap { wholeDegrees($0.value * 180 / .pi) }
        if dim { o.stale = OverlayLine(String(format: "TELEMETRY %.1f s OLD", Double(age / 100_000) / 10), .bad) }
        return o
    }

    /// Degrees rounded to a whole number; nil for a value that is not finite or past ±100,000°
    /// (the parser's ``Telemetry`` drops those already; a display never traps on one).
    static func wholeDegrees(_ d: Double) -> Int? {
        d.isFinite && abs(d) < 100_000 ? Int(d.rounded()) : nil
    }

    /// A wall tile's compact form: mode, altitude, battery and link on one line each.
    public var compactLines: [OverlayLine] {
        [stale, mode, altitude, battery, link].compactMap { $0 }
    }

    private static func battery(_ t: Telemetry) -> OverlayLine? {
        let v = t.batteryVolts.map { String(format: "%.1f V", $0.value) }
        let r = t.batteryRemaining?.value
        guard v != nil || r != nil else { return nil }
        let text = "BAT " + [v, r.map { String(format: "%.0f%%", $0 * 100) }].compactMap { $0 }.joined(separator: " ")
        let tone: OverlayLine.Tone = r.map { $0 < 0.2 ? .bad : $0 < 0.35 ? .warning : .good } ?? .plain
        return OverlayLine(text, tone)
    }

    /// RSSI in the radio's units (SiK: 0–254, about 2 per dB) when a radio reports it, else the
    /// autopilot's link quality (1 − SYS_STATUS.drop_rate_comm).
    private static func link(_ t: Telemetry) -> OverlayLine? {
        if let r = t.rssi?.value {
            return OverlayLine("RSSI \(r)/254", r < 60 ? .bad : r < 100 ? .warning : .good)
        }
        guard let q = t.linkQuality?.value else { return nil }
        return OverlayLine(String(format: "LQ %.0f%%", q * 100), q < 0.8 ? .bad : q < 0.95 ? .warning : .good)
    }

    /// GPS_FIX_TYPE's name (common.xml): 0/1 no fix, 2 2D, 3 3D, 4 DGPS, 5 RTK float, 6 RTK fixed.
    static func fixName(_ fix: UInt8) -> String {
        switch fix {
        case 0, 1: return "no fix"
        case 2: return "2D"
        case 3: return "3D"
        case 4: return "DGPS"
        case 5: return "RTK float"
        case 6: return "RTK fixed"
        default: return "fix \(fix)"
        }
    }
}
