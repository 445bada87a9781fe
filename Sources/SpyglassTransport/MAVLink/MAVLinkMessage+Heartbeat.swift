extension MAVLinkMessage {
    /// HEARTBEAT (MAVLink minimal.xml, message 0): what the sender is and its mode, about 1 Hz.
    /// Wire order: custom_mode u32, type u8, autopilot u8, base_mode u8, system_status u8,
    /// mavlink_version u8 (9 bytes).
    public struct Heartbeat: Equatable, Sendable {
        /// The autopilot's own mode number (ArduPilot: the mode enum; PX4: main/sub mode bytes).
        public var customMode: UInt32
        /// MAV_TYPE: 1 fixed wing, 2 quadrotor, 6 GCS, 10 ground rover, …
        public var type: UInt8
        /// MAV_AUTOPILOT: 3 ArduPilot, 8 invalid (not a flight controller), 12 PX4, …
        public var autopilot: UInt8
        /// MAV_MODE_FLAG bits (0x80 safety armed, 0x01 custom mode enabled).
        public var baseMode: UInt8
        /// MAV_STATE: 3 standby, 4 active, 5 critical, 6 emergency, …
        public var systemStatus: UInt8
        /// The MAVLink version the sender was built with (3 for MAVLink 1.0/2.0).
        public var mavlinkVersion: UInt8

        /// MAV_TYPE_GCS.
        public static let typeGCS: UInt8 = 6
        /// MAV_AUTOPILOT_INVALID: a component that is not a flight controller.
        public static let autopilotInvalid: UInt8 = 8
        /// MAV_AUTOPILOT_ARDUPILOTMEGA.
        public static let autopilotArduPilot: UInt8 = 3
        /// MAV_AUTOPILOT_PX4.
        public static let autopilotPX4: UInt8 = 12

        init(_ p: MAVLinkPayload) {
            customMode = p.u32(0)
            type = p.u8(4)
            autopilot = p.u8(5)
            baseMode = p.u8(6)
            systemStatus = p.u8(7)
            mavlinkVersion = p.u8(8)
        }

        /// MAV_MODE_FLAG_SAFETY_ARMED (0x80): motors armed.
        public var armed: Bool { baseMode & 0x80 != 0 }
        /// The mode's name (see ``FlightMode``).
        public var modeName: String { FlightMode.name(autopilot: autopilot, vehicleType: type, customMode: customMode) }
    }

    /// STATUSTEXT (MAVLink common.xml, message 253): a line of text for the operator.
    /// Wire order: severity u8, text char[50], then extensions id u16, chunk_seq u8 (54 bytes).
    public struct StatusText: Equatable, Sendable {
        /// MAV_SEVERITY: 0 emergency … 4 warning, 5 notice, 6 info, 7 debug.
        public var severity: UInt8
        /// The text, up to 50 bytes, NUL-terminated when shorter (UTF-8; bad bytes replaced).
        public var text: String
        /// Non-zero: the text is one chunk of a longer message with this id.
        public var id: UInt16
        /// The chunk's index within message `id`.
        public var chunkSequence: UInt8

        init(_ p: MAVLinkPayload) {
            severity = p.u8(0)
            text = p.text(1, 50)
            id = p.u16(51)
            chunkSequence = p.u8(53)
        }
    }
}
