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
