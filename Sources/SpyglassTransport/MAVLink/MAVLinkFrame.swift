/// One MAVLink packet as it came off the wire, checked (CRC and CRC_EXTRA) but not decoded.
///
/// MAVLink 2 (magic 0xFD): len, incompat flags, compat flags, seq, sysid, compid, 24-bit msgid
/// (little-endian), payload, CRC, and a 13-byte signature when incompat flag 0x01 is set.
/// MAVLink 1 (magic 0xFE): len, seq, sysid, compid, 8-bit msgid, payload, CRC.
/// (MAVLink serialization, https://mavlink.io/en/guide/serialization.html)
public struct MAVLinkFrame: Equatable, Sendable {
    /// 1 (magic 0xFE) or 2 (magic 0xFD).
    public var version: Int
    /// The sender's packet sequence number (wraps at 256; gaps are loss).
    public var sequence: UInt8
    /// The sending system (vehicle or GCS), 1...255.
    public var systemID: UInt8
    /// The sending component of that system (1: MAV_COMP_ID_AUTOPILOT1).
    public var componentID: UInt8
    /// The message id (24 bits in MAVLink 2, 8 bits in MAVLink 1).
    public var messageID: UInt32
    /// The payload, zero-extended to the message's full length (MAVLink 2 senders drop trailing
    /// zero bytes, "Payload Truncation"); a longer payload (extension fields newer than the
    /// dialect) is kept as received.
    public var payload: [UInt8]
    /// True when incompat flag 0x01 (MAVLINK_IFLAG_SIGNED) was set: a 13-byte signature followed
    /// the CRC (skipped, not verified: Spyglass holds no key).
    public var signed: Bool
    /// The frame's exact bytes as received, magic to the end of the signature (for a .tlog).
    public var raw: [UInt8]

    public init(version: Int, sequence: UInt8, systemID: UInt8, componentID: UInt8, messageID: UInt32,
                payload: [UInt8], signed: Bool, raw: [UInt8]) {
        self.version = version
        self.sequence = sequence
        self.systemID = systemID
        self.componentID = componentID
        self.messageID = messageID
        self.payload = payload
        self.signed = signed
        self.raw = raw
    }

    /// MAVLink 2's start-of-frame byte.
    public static let magicV2: UInt8 = 0xFD
    /// MAVLink 1's start-of-frame byte.
    public static let magicV1: UInt8 = 0xFE
    /// Incompat flag 0x01: the frame is signed (the only incompat flag MAVLink 2 defines).
    public static let flagSigned: UInt8 = 0x01
    /// The signature's length: link id (1), timestamp (6), signature (6).
    public static let signatureLength = 13
    /// The longest frame: a MAVLink 2 header (10), 255 payload bytes, CRC (2), signature (13).
    public static let maxLength = 280
}
