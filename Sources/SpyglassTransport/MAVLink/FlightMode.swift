/// Flight-mode names from HEARTBEAT's custom_mode, which each autopilot defines itself.
///
/// ArduPilot (autopilot 3): custom_mode is the firmware's mode number, the table picked by
/// MAV_TYPE (ArduCopter/mode.h, ArduPlane/mode.h, Rover/mode.h `Mode::Number`; names as
/// ArduPilot's GCSs show them, e.g. "LOITER", "FBWA"). PX4 (autopilot 12): main mode in bits
/// 16...23, sub mode in bits 24...31 (PX4's src/modules/commander/px4_custom_mode.h; names as
/// QGroundControl's PX4FirmwarePlugin shows them). Anything else: "mode N".
public enum FlightMode {
    /// Which ArduPilot firmware a MAV_TYPE belongs to.
    public enum ArduPilotVehicle: Sendable { case copter, plane, rover }

    /// The mode's name.
    /// - Parameters:
    ///   - autopilot: HEARTBEAT.autopilot (MAV_AUTOPILOT).
    ///   - vehicleType: HEARTBEAT.type (MAV_TYPE).
    ///   - customMode: HEARTBEAT.custom_mode.
    public static func name(autopilot: UInt8, vehicleType: UInt8, customMode: UInt32) -> String {
        let known: String?
        switch autopilot {
        case MAVLinkMessage.Heartbeat.autopilotArduPilot:
            known = arduPilotVehicle(vehicleType).flatMap { arduPilotName($0, customMode) }
        case MAVLinkMessage.Heartbeat.autopilotPX4:
            known = px4Name(customMode)
        default:
            known = nil
        }
        return known ?? "mode \(customMode)"
    }

    /// ArduPilot's firmware for a MAV_TYPE (common.xml MAV_TYPE; the types each firmware reports):
    /// copters (quad, coaxial, heli, hexa, octo, tri, dodeca, deca, generic multirotor), planes
    /// (fixed wing and the VTOL types 19...25), rovers (ground rover, surface boat); else nil.
    public static func arduPilotVehicle(_ type: UInt8) -> ArduPilotVehicle? {
        switch type {
        case 2, 3, 4, 13, 14, 15, 29, 35, 43: return .copter
        case 1, 19...25: return .plane
        case 10, 11: return .rover
        default: return nil
        }
    }

    /// An ArduPilot mode number's name, or nil when that firmware has no such mode.
    public static func arduPilotName(_ vehicle: ArduPilotVehicle, _ mode: UInt32) -> String? {
        switch vehicle {
        case .copter: return copterModes[mode]
        case .plane: return planeModes[mode]
        case .rover: return roverModes[mode]
        }
    }

    /// A PX4 custom_mode's name as QGroundControl shows it, or nil when unknown.
    public static func px4Name(_ customMode: UInt32) -> String? {
        let main = (customMode >> 16) & 0xFF
        let sub = customMode >> 24
        switch main {
        case 3: return px4PositionModes[sub]
        case 4: return px4AutoModes[sub]
        default: return sub == 0 ? px4MainModes[main] : nil
        }
    }
}
