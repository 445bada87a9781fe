import Foundation
import SpyglassTransport

/// The telemetry gauges of `/metrics` (Prometheus text exposition 0.0.4), one series per feed
/// with a `--mavlink` input, in base units, from ``Telemetry``:
/// - `spyglass_telemetry_battery_volts`, `spyglass_telemetry_battery_remaining_ratio` (0–1);
/// - `spyglass_telemetry_altitude_above_home_metres`, `spyglass_telemetry_ground_speed_metres_per_second`;
/// - `spyglass_telemetry_gps_satellites`, `spyglass_telemetry_rssi` (RADIO_STATUS units, 0–254);
/// - `spyglass_telemetry_armed` (0 or 1);
/// - `spyglass_telemetry_age_seconds`: since the latest MAVLink frame applied (NaN before one);
/// - `spyglass_telemetry_flight_mode{mode}`: 1 for the current mode's name;
/// - `spyglass_telemetry_frames_total`, `spyglass_telemetry_crc_errors_total`,
///   `spyglass_telemetry_other_vehicle_frames_total` (counters).
/// A value the vehicle has not sent is left out, not written as zero.
public enum TelemetryMetrics {
    /// One feed's telemetry: its `feed` label, the vehicle's state and the parser's counts.
    public struct Feed: Sendable {
        public var feed: String
        public var telemetry: Telemetry
        public var counters: MAVLinkParser.Counters
        public init(feed: String, telemetry: Telemetry, counters: MAVLinkParser.Counters) {
            self.feed = feed
            self.telemetry = telemetry
            self.counters = counters
        }
    }

    private static let gauges: [(name: String, help: String, value: @Sendable (Telemetry) -> Double?)] = [
        ("battery_volts", "Battery voltage (SYS_STATUS or BATTERY_STATUS), volts.", { $0.batteryVolts?.value }),
        ("battery_remaining_ratio", "Battery remaining, 0 to 1.", { $0.batteryRemaining?.value }),
        ("altitude_above_home_metres", "Altitude above home (GLOBAL_POSITION_INT.relative_alt), metres.", { $0.altitudeAboveHome?.value }),
        ("ground_speed_metres_per_second", "Ground speed (VFR_HUD), m/s.", { $0.groundSpeed?.value }),
        ("gps_satellites", "GPS satellites visible (GPS_RAW_INT).", { $0.satellites.map { Double($0.value) } }),
        ("rssi", "Radio RSSI (RADIO_STATUS.rssi, the radio's units, 0 to 254).", { $0.rssi.map { Double($0.value) } }),
        ("armed", "1 when the vehicle is armed (HEARTBEAT base_mode).", { $0.armed.map { $0.value ? 1 : 0 } }),
    ]

    /// The families above for `feeds`, in exposition text.
    /// - Parameter nowMicros: now, monotonic µs (for the age).
    public static func text(_ feeds: [Feed], nowMicros: UInt64) -> String {
        guard !feeds.isEmpty else { return "" }
        var out = ""
        for g in gauges {
            out += "# HELP spyglass_telemetry_\(g.name) \(g.help)\n# TYPE spyglass_telemetry_\(g.name) gauge\n"
            // Six significant digits: a MAVLink float's 5.2 reads 5.2, not 5.199999809265137.
            for f in feeds { if let v = g.value(f.telemetry) { out += "spyglass_telemetry_\(g.name){feed=\"\(MetricsExposition.escape(f.feed))\"} \(String(format: "%.6g", v))\n" } }
        }
        out += "# HELP spyglass_telemetry_age_seconds Time since the latest MAVLink frame (NaN before one).\n# TYPE spyglass_telemetry_age_seconds gauge\n"
        for f in feeds {
            let age = f.telemetry.messageAgeMicros(nowMicros: nowMicros).map { String(Double($0) / 1e6) } ?? "NaN"
            out += "spyglass_telemetry_age_seconds{feed=\"\(MetricsExposition.escape(f.feed))\"} \(age)\n"
        }
        out += "# HELP spyglass_telemetry_flight_mode The vehicle's flight mode (HEARTBEAT.custom_mode), 1 for its name.\n# TYPE spyglass_telemetry_flight_mode gauge\n"
        for f in feeds {
            if let mode = f.telemetry.modeName?.value { out += "spyglass_telemetry_flight_mode{feed=\"\(MetricsExposition.escape(f.feed))\",mode=\"\(MetricsExposition.escape(mode))\"} 1\n" }
        }
        out += counters(feeds)
        return out
    }

    private static func counters(_ feeds: [Feed]) -> String {
        let families: [(String, String, (Feed) -> Int)] = [
            ("frames", "MAVLink frames received with a good CRC.", { $0.counters.framesGood }),
            ("crc_errors", "MAVLink frames dropped for a bad CRC.", { $0.counters.crcErrors }),
            ("other_vehicle_frames", "Frames of a second vehicle on the link (counted, not shown).", { $0.telemetry.otherVehicleFrames }),
        ]
        var out = ""
        for (name, help, value) in families {
            out += "# HELP spyglass_telemetry_\(name)_total \(help)\n# TYPE spyglass_telemetry_\(name)_total counter\n"
            for f in feeds { out += "spyglass_telemetry_\(name)_total{feed=\"\(MetricsExposition.escape(f.feed))\"} \(value(f))\n" }
        }
        return out
    }
}
