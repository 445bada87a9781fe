/// Emulation prevention for NAL unit payloads.
///
/// Inside a NAL unit an encoder inserts `0x03` after every `0x00 0x00` that would
/// otherwise be followed by a byte `<= 0x03`, so that no start code can appear in the
/// payload. The raw byte sequence payload (RBSP) is the NAL unit with those bytes removed.
/// Rule: ITU-T H.264 §7.3.1 / §7.4.1 (`emulation_prevention_three_byte`), H.265 §7.3.1.1.
public enum RBSP {
    /// Removes emulation-prevention bytes.
    ///
    /// - Parameter ebsp: NAL unit bytes (header included or not), as sent.
    /// - Returns: the RBSP. When nothing is escaped this is a plain copy of the input.
    public static func unescape<C: Collection>(_ ebsp: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(ebsp.count)
        var zeros = 0
        for b in ebsp {
            if zeros >= 2 && b == 0x03 {
                zeros = 0
                continue
            }
            out.append(b)
            zeros = (b == 0) ? zeros + 1 : 0
        }
        return out
    }

    /// Inserts emulation-prevention bytes so that the result never contains
    /// `0x00 0x00 0x0{0,1,2,3}`, and never ends in `0x00` (a trailing `0x03` is added then,
    /// as H.264 §7.4.1 requires for `cabac_zero_word`-like tails).
    ///
    /// - Parameter rbsp: payload bytes without escapes.
    /// - Returns: the escaped bytes, ready to follow a NAL unit header.
    public static func escape<C: Collection>(_ rbsp: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(rbsp.count + rbsp.count / 64 + 2)
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 0x03 {
                out.append(0x03)
                zeros = 0
            }
            out.append(b)
            zeros = (b == 0) ? zeros + 1 : 0
        }
        if out.last == 0x00 { out.append(0x03) }
        return out
    }
}
