/// The HEARTBEAT a ground station sends (MAVLink common.xml / minimal.xml, message 0): what
/// routers (mavlink-router, MAVProxy's outputs) wait for before they forward to a UDP client.
public enum MAVLinkHeartbeat {
    /// System id of a ground station (255, as QGroundControl and Mission Planner use).
    public static let gcsSystemID: UInt8 = 255
    /// MAV_COMP_ID_MISSIONPLANNER (190), the component id ground stations send from.
    public static let gcsComponentID: UInt8 = 190
    /// HEARTBEAT's CRC_EXTRA (minimal.xml).
    static let crcExtra: UInt8 = 50

    /// A MAVLink 2 HEARTBEAT frame from a ground station: MAV_TYPE_GCS (6),
    /// MAV_AUTOPILOT_INVALID (8), base_mode 0, MAV_STATE_ACTIVE (4), mavlink_version 3.
    /// Wire order (fields by size): custom_mode u32, type, autopilot, base_mode, system_status,
    /// mavlink_version; the payload's trailing zeros are kept (9 bytes).
    /// - Parameter sequence: the packet sequence number (the sender's own, wrapping at 256).
    /// - Returns: the frame's bytes, 0xFD to the CRC (21 bytes).
    public static func gcsFrame(sequence: UInt8) -> [UInt8] {
        let payload: [UInt8] = [0, 0, 0, 0, 6, 8, 0, 4, 3]
        var frame: [UInt8] = [0xFD, UInt8(payload.count), 0, 0, sequence, gcsSystemID, gcsComponentID, 0, 0, 0] + payload
        let crc = MAVLinkCRC.checksum(frame[1...], extra: crcExtra)
        frame += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return frame
    }
}
