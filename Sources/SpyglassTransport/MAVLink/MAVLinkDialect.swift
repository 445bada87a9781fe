/// The messages a parser knows: each id's CRC_EXTRA (the checksum seed that makes a frame of a
/// different layout fail its CRC) and its full payload length, extensions included.
///
/// A frame whose id is not here cannot be checked, so the parser counts and drops it.
/// (MAVLink serialization, "CRC_EXTRA", https://mavlink.io/en/guide/serialization.html#crc_extra)
public struct MAVLinkDialect: Sendable {
    /// One message's checking data.
    public struct Message: Equatable, Sendable {
        /// CRC_EXTRA: the CRC of the message's name and base fields (MAVLink's mavgen computes it).
        public var crcExtra: UInt8
        /// The payload's full length in bytes (base fields and extensions), 1...255.
        public var length: Int

        public init(crcExtra: UInt8, length: Int) {
            self.crcExtra = crcExtra
            self.length = length
        }
    }

    /// The messages by id.
    public var messages: [UInt32: Message]

    public init(messages: [UInt32: Message]) { self.messages = messages }

    /// The message with this id, or nil when the dialect does not define it.
    public subscript(id: UInt32) -> Message? { messages[id] }

    /// MAVLink common.xml (which includes minimal.xml and standard.xml): every message's CRC_EXTRA
    /// and length, as pymavlink 2.4.50 generates them (`pymavlink/dialects/v20/common.py`).
    public static let common = MAVLinkDialect(messages: Dictionary(
        commonTable.map { (UInt32($0.0), Message(crcExtra: $0.1, length: Int($0.2))) },
        uniquingKeysWith: { first, _ in first }))
}
