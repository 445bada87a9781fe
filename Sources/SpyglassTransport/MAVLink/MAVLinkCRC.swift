/// The MAVLink checksum: CRC-16/MCRF4XX (the X.25 CRC of ITU-T X.25 run LSB-first, polynomial
/// 0x1021 reflected, initial value 0xFFFF, no final XOR), over the frame after its magic byte and
/// then the message's CRC_EXTRA byte (MAVLink serialization, "Checksum",
/// https://mavlink.io/en/guide/serialization.html#checksum).
public enum MAVLinkCRC {
    /// The initial value, 0xFFFF.
    public static let initial: UInt16 = 0xFFFF

    /// One byte into the running checksum (`crc_accumulate` of MAVLink's checksum.h).
    @inline(__always)
    public static func accumulate(_ byte: UInt8, into crc: UInt16) -> UInt16 {
        var t = byte ^ UInt8(truncatingIfNeeded: crc)
        t ^= t << 4
        let w = UInt16(t)
        return (crc >> 8) ^ (w << 8) ^ (w << 3) ^ (w >> 4)
    }

    /// The checksum of `bytes`, then `extra` (a message's CRC_EXTRA) when given.
    /// - Returns: the 16-bit CRC, sent little-endian after the payload.
    public static func checksum(_ bytes: some Sequence<UInt8>, extra: UInt8? = nil) -> UInt16 {
        if let crc = bytes.withContiguousStorageIfAvailable({ checksum($0, extra: extra) }) { return crc }
        return Array(bytes).withUnsafeBufferPointer { checksum($0, extra: extra) }
    }

    /// The checksum of contiguous bytes, then `extra` when given.
    public static func checksum(_ bytes: UnsafeBufferPointer<UInt8>, extra: UInt8? = nil) -> UInt16 {
        var crc = initial
        for b in bytes { crc = accumulate(b, into: crc) }
        if let extra { crc = accumulate(extra, into: crc) }
        return crc
    }
}
