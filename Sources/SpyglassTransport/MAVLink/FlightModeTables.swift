extension FlightMode {
    /// ArduCopter/mode.h, `enum class Mode::Number`.
    static let copterModes: [UInt32: String] = [
        0: "STABILIZE", 1: "ACRO", 2: "ALT_HOLD", 3: "AUTO", 4: "GUIDED", 5: "LOITER", 6: "RTL", 7: "CIRCLE",
        9: "LAND", 11: "DRIFT", 13: "SPORT", 14: "FLIP", 15: "AUTOTUNE", 16: "POSHOLD", 17: "BRAKE",
        18: "THROW", 19: "AVOID_ADSB", 20: "GUIDED_NOGPS", 21: "SMART_RTL", 22: "FLOWHOLD", 23: "FOLLOW",
        24: "ZIGZAG", 25: "SYSTEMID", 26: "AUTOROTATE", 27: "AUTO_RTL", 28: "TURTLE",
    ]

    /// ArduPlane/mode.h, `enum Mode::Number` (FLY_BY_WIRE_A/B shown as FBWA/FBWB).
    static let planeModes: [UInt32: String] = [
        0: "MANUAL", 1: "CIRCLE", 2: "STABILIZE", 3: "TRAINING", 4: "ACRO", 5: "FBWA", 6: "FBWB",
        7: "CRUISE", 8: "AUTOTUNE", 10: "AUTO", 11: "RTL", 12: "LOITER", 13: "TAKEOFF", 14: "AVOID_ADSB",
        15: "GUIDED", 16: "INITIALISING", 17: "QSTABILIZE", 18: "QHOVER", 19: "QLOITER", 20: "QLAND",
        21: "QRTL", 22: "QAUTOTUNE", 23: "QACRO", 24: "THERMAL", 25: "LOITER_ALT_QLAND", 26: "AUTOLAND",
    ]

    /// Rover/mode.h, `enum Mode::Number`.
    static let roverModes: [UInt32: String] = [
        0: "MANUAL", 1: "ACRO", 3: "STEERING", 4: "HOLD", 5: "LOITER", 6: "FOLLOW", 7: "SIMPLE", 8: "DOCK",
        9: "CIRCLE", 10: "AUTO", 11: "RTL", 12: "SMART_RTL", 15: "GUIDED", 16: "INITIALISING",
    ]

    /// PX4_CUSTOM_MAIN_MODE without a sub mode (px4_custom_mode.h): MANUAL 1, ALTCTL 2, ACRO 5,
    /// OFFBOARD 6, STABILIZED 7, RATTITUDE_LEGACY 8, SIMPLE 9, TERMINATION 10, ALTITUDE_CRUISE 11.
    static let px4MainModes: [UInt32: String] = [
        1: "Manual", 2: "Altitude", 5: "Acro", 6: "Offboard", 7: "Stabilized", 8: "Rattitude", 9: "Simple",
        10: "Termination", 11: "Altitude Cruise",
    ]

    /// PX4_CUSTOM_SUB_MODE_POSCTL (main mode POSCTL, 3): POSCTL 0, ORBIT 1, SLOW 2.
    static let px4PositionModes: [UInt32: String] = [0: "Position", 1: "Orbit", 2: "Position Slow"]

    /// PX4_CUSTOM_SUB_MODE_AUTO (main mode AUTO, 4): READY 1, TAKEOFF 2, LOITER 3, MISSION 4,
    /// RTL 5, LAND 6, RTGS 7 (reserved since 2020), FOLLOW_TARGET 8, PRECLAND 9, VTOL_TAKEOFF 10,
    /// EXTERNAL1...8 11...18.
    static let px4AutoModes: [UInt32: String] = [
        1: "Ready", 2: "Takeoff", 3: "Hold", 4: "Mission", 5: "Return", 6: "Land", 7: "Return to Groundstation",
        8: "Follow Me", 9: "Precision Land", 10: "VTOL Takeoff", 11: "External 1", 12: "External 2",
        13: "External 3", 14: "External 4", 15: "External 5", 16: "External 6", 17: "External 7",
        18: "External 8",
    ]
}
