import Testing
@testable import SpyglassTransport

/// Mode names from HEARTBEAT.custom_mode: ArduPilot's tables by MAV_TYPE, PX4's main/sub modes.
@Suite struct MAVLinkFlightModeTests {
    static func ardupilot(_ type: UInt8, _ mode: UInt32) -> String {
        FlightMode.name(autopilot: 3, vehicleType: type, customMode: mode)
    }

    static func px4(_ main: UInt32, _ sub: UInt32 = 0) -> String {
        FlightMode.name(autopilot: 12, vehicleType: 2, customMode: main << 16 | sub << 24)
    }

    @Test func arduCopterModes() {
        #expect(Self.ardupilot(2, 5) == "LOITER")       // quad
        #expect(Self.ardupilot(4, 6) == "RTL")          // helicopter
        #expect(Self.ardupilot(13, 16) == "POSHOLD")    // hexa
        #expect(Self.ardupilot(15, 0) == "STABILIZE")   // tri
        #expect(Self.ardupilot(3, 2) == "ALT_HOLD")     // coaxial
        #expect(Self.ardupilot(14, 21) == "SMART_RTL")  // octo
    }

    @Test func arduPlaneModes() {
        #expect(Self.ardupilot(1, 5) == "FBWA")
        #expect(Self.ardupilot(1, 10) == "AUTO")
        #expect(Self.ardupilot(1, 12) == "LOITER")
        #expect(Self.ardupilot(21, 19) == "QLOITER")   // VTOL tiltrotor
        #expect(Self.ardupilot(20, 17) == "QSTABILIZE")
    }

    @Test func arduRoverModes() {
        #expect(Self.ardupilot(10, 4) == "HOLD")
        #expect(Self.ardupilot(10, 0) == "MANUAL")
        #expect(Self.ardupilot(11, 10) == "AUTO")   // surface boat
        #expect(Self.ardupilot(11, 12) == "SMART_RTL")
    }

    @Test func px4ModesAsQGroundControlShowsThem() {
        #expect(Self.px4(1) == "Manual")
        #expect(Self.px4(2) == "Altitude")
        #expect(Self.px4(3) == "Position")
        #expect(Self.px4(3, 1) == "Orbit")
        #expect(Self.px4(4, 2) == "Takeoff")
        #expect(Self.px4(4, 3) == "Hold")
        #expect(Self.px4(4, 4) == "Mission")
        #expect(Self.px4(4, 5) == "Return")
        #expect(Self.px4(4, 6) == "Land")
        #expect(Self.px4(4, 8) == "Follow Me")
        #expect(Self.px4(4, 9) == "Precision Land")
        #expect(Self.px4(5) == "Acro")
        #expect(Self.px4(6) == "Offboard")
        #expect(Self.px4(7) == "Stabilized")
        #expect(Self.px4(8) == "Rattitude")
        #expect(FlightMode.name(autopilot: 12, vehicleType: 2, customMode: 0x0304_0000) == "Hold", "custom_mode as PX4 sends it")
    }

    @Test func unknownModesAreNumbered() {
        #expect(Self.ardupilot(2, 99) == "mode 99")
        #expect(Self.ardupilot(12, 3) == "mode 3", "ArduSub: no table")
        #expect(Self.ardupilot(1, 9) == "mode 9", "Plane has no mode 9")
        #expect(Self.px4(4, 99) == "mode \(4 << 16 | 99 << 24)")
        #expect(Self.px4(1, 1) == "mode \(1 << 16 | 1 << 24)", "Manual has no sub modes")
        #expect(FlightMode.name(autopilot: 0, vehicleType: 2, customMode: 7) == "mode 7", "generic autopilot")
    }
}
