/// The messages Spyglass decodes, as typed values in SI-ish units (common.xml field units
/// converted; a field's "unknown" value becomes nil). Field offsets follow MAVLink's wire order:
/// base fields sorted by type size, largest first, extensions after.
/// (MAVLink common.xml, minimal.xml; https://mavlink.io/en/messages/common.html)
public enum MAVLinkMessage: Equatable, Sendable {
    case heartbeat(Heartbeat)
    case sysStatus(SysStatus)
    case gpsRawInt(GPSRawInt)
    case attitude(Attitude)
    case globalPositionInt(GlobalPositionInt)
    case vfrHUD(VFRHUD)
    case radioStatus(RadioStatus)
    case batteryStatus(BatteryStatus)
    case homePosition(HomePosition)
    case statusText(StatusText)

    /// Message ids (common.xml, minimal.xml).
    public enum ID {
        public static let heartbeat: UInt32 = 0
        public static let sysStatus: UInt32 = 1
        public static let gpsRawInt: UInt32 = 24
        public static let attitude: UInt32 = 30
        public static let globalPositionInt: UInt32 = 33
        public static let vfrHUD: UInt32 = 74
        public static let radioStatus: UInt32 = 109
        public static let batteryStatus: UInt32 = 147
        public static let homePosition: UInt32 = 242
        public static let statusText: UInt32 = 253
    }

    /// Decodes a frame, or nil when its message is not one of these.
    public init?(_ frame: MAVLinkFrame) {
        let p = MAVLinkPayload(frame.payload)
        switch frame.messageID {
        case ID.heartbeat: self = .heartbeat(Heartbeat(p))
        case ID.sysStatus: self = .sysStatus(SysStatus(p))
        case ID.gpsRawInt: self = .gpsRawInt(GPSRawInt(p))
        case ID.attitude: self = .attitude(Attitude(p))
        case ID.globalPositionInt: self = .globalPositionInt(GlobalPositionInt(p))
        case ID.vfrHUD: self = .vfrHUD(VFRHUD(p))
        case ID.radioStatus: self = .radioStatus(RadioStatus(p))
        case ID.batteryStatus: self = .batteryStatus(BatteryStatus(p))
        case ID.homePosition: self = .homePosition(HomePosition(p))
        case ID.statusText: self = .statusText(StatusText(p))
        default: return nil
        }
    }
}
