/// CRC_32 of MPEG-2 PSI sections (ISO/IEC 13818-1 Annex A): polynomial 0x04C11DB7, initial value
/// 0xFFFFFFFF, no bit reflection, no final XOR. Over a whole section, its own CRC_32 included,
/// the result is 0 when the section is intact.
public enum SectionCRC {
    private static let table: [UInt32] = (0..<256).map { (i: Int) -> UInt32 in
        var c = UInt32(i) << 24
        for _ in 0..<8 { c = c & 0x8000_0000 != 0 ? (c << 1) ^ 0x04C1_1DB7 : c << 1 }
        return c
    }

    /// The CRC of `bytes`.
    public static func of(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))] }
        return crc
    }
}
