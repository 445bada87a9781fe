import Testing
@testable import SpyglassDisplay
@testable import SpyglassTransport

/// The OSD's model (``OSD``): what it says and in which tone, from a vehicle's state built by
/// the real parser's ``Telemetry`` (KLV applied directly, as the feed does).
@Suite struct OSDTests {
    static let second: UInt64 = 1_000_000

    /// A state with the given fields, all arrived at `at`.
    static func state(at t: UInt64, remaining: Double? = nil, klv: PlatformMetadata? = nil) -> Telemetry {
        var s = Telemetry()
        if let klv { s.apply(klv, arrivalMicros: t) }
        if let r = remaining {
            s.batteryRemaining = Telemetry.Stamped(r, at: t)
            s.batteryVolts = Telemetry.Stamped(14.1, at: t)
            s.lastMessageMicros = t
        }
        return s
    }

    @Test func aBatteryUnderTwentyPercentIsRedAndOverThirtyFiveGreen() {
        #expect(OSD.of(Self.state(at: 10 * Self.second, remaining: 0.15), nowMicros: 10 * Self.second).battery == OverlayLine("BAT 14.1 V 15%", .bad))
        #expect(OSD.of(Self.state(at: 10 * Self.second, remaining: 0.30), nowMicros: 10 * Self.second).battery?.tone == .warning)
        #expect(OSD.of(Self.state(at: 10 * Self.second, remaining: 0.76), nowMicros: 10 * Self.second).battery?.tone == .good)
        #expect(OSD.of(Self.state(at: 10 * Self.second, remaining: 0.15), nowMicros: 10 * Self.second).compactLines.map(\.text) == ["BAT 14.1 V 15%"],
                "a wall tile's compact form")
    }

    @Test func telemetryOlderThanTwoSecondsIsGreyAndAged() {
        let s = Self.state(at: 10 * Self.second, remaining: 0.15)
        #expect(OSD.of(s, nowMicros: 11 * Self.second).stale == nil)
        let old = OSD.of(s, nowMicros: 13_450_000)
        #expect(old.stale == OverlayLine("TELEMETRY 3.4 s OLD", .bad))
        #expect(old.battery?.tone == .stale, "no longer red: it is not known to be true now")
        #expect(OSD.of(Telemetry(), nowMicros: 5).stale?.text == "NO TELEMETRY")
    }

    @Test func aKLVPlatformFeedsTheSameOSD() {
        let klv = PlatformMetadata(headingDegrees: 90, latitudeDegrees: 47.3977, longitudeDegrees: 8.5456, altitudeMeters: 500)
        let o = OSD.of(Self.state(at: Self.second, klv: klv), nowMicros: Self.second)
        #expect(o.altitude?.text == "ALT 500 m MSL")
        #expect(o.home?.text == "47.397700, 8.545600")
        #expect(o.heading == 90 && o.stale == nil)
    }
}

/// Impossible values from a vehicle (a broken sensor, a hostile sender) are dropped and counted,
/// never drawn and never a trap: NaN and infinite floats, a latitude past 90°, a heading of -1.
@Suite struct ImplausibleTelemetryTests {
    static func frame(_ id: UInt32, _ payload: [UInt8]) -> MAVLinkFrame {
        MAVLinkFrame(version: 2, sequence: 0, systemID: 1, componentID: 1, messageID: id, payload: payload, signed: false, raw: [])
    }
    static func f32(_ f: Float) -> [UInt8] { withUnsafeBytes(of: f.bitPattern.littleEndian, Array.init) }
    static func i32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    /// An ArduCopter quad's HEARTBEAT (common.xml message 0): LOITER, armed.
    static let heartbeat = frame(0, [5, 0, 0, 0, 2, 3, 0x81 | 0x10, 4, 3])

    @Test func nanAndInfinityAreDroppedAndCounted() {
        var t = Telemetry()
        t.apply(Self.heartbeat, arrivalMicros: 1)
        // ATTITUDE (message 30): time_boot_ms, then roll, pitch, yaw and their rates.
        t.apply(Self.frame(30, [0, 0, 0, 0] + Self.f32(.nan) + Self.f32(.infinity) + Self.f32(1e38) + Array(repeating: 0, count: 12)), arrivalMicros: 2)
        // VFR_HUD (message 74): airspeed, groundspeed, alt, climb, then heading (int16) and throttle.
        t.apply(Self.frame(74, Self.f32(1) + Self.f32(-.infinity) + Self.f32(10) + Self.f32(.nan) + [0xFF, 0xFF, 0, 0]), arrivalMicros: 3)
        // GLOBAL_POSITION_INT (message 33): time_boot_ms, lat, lon (1e-7°), alt, relative_alt (mm), …
        t.apply(Self.frame(33, [0, 0, 0, 0] + Self.i32(Int32.max) + Self.i32(85_000_000) + Self.i32(500_000) + Self.i32(42_500)
                             + Array(repeating: 0, count: 8)), arrivalMicros: 4)
        #expect(t.roll == nil && t.pitch == nil && t.groundSpeed == nil && t.climb == nil && t.heading == nil && t.position == nil)
        #expect(t.implausibleValues == 6, "\(t.implausibleValues)")
        #expect(t.altitudeAboveHome?.value == 42.5, "the message's possible fields are kept")
        let o = OSD.of(t, nowMicros: 5)
        #expect(o.roll == nil && o.heading == nil && o.speed == nil && o.altitude?.text == "ALT 42.5 m")
        #expect(OSD.wholeDegrees(.nan) == nil && OSD.wholeDegrees(-.infinity) == nil && OSD.wholeDegrees(1e300) == nil)
    }
}
