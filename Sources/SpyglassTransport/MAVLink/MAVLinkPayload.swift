/// Little-endian field reads from a MAVLink payload at byte offsets (MAVLink serialization:
/// fields are little-endian, base fields sorted by type size descending, extensions after in
/// declaration order). An offset past the end reads zeros, as the wire's truncation would.
struct MAVLinkPayload {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func u8(_ at: Int) -> UInt8 { at >= 0 && at < bytes.count ? bytes[at] : 0 }
    func i8(_ at: Int) -> Int8 { Int8(bitPattern: u8(at)) }
    func u16(_ at: Int) -> UInt16 { UInt16(u8(at)) | UInt16(u8(at + 1)) << 8 }
    func i16(_ at: Int) -> Int16 { Int16(bitPattern: u16(at)) }
    func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    func i32(_ at: Int) -> Int32 { Int32(bitPattern: u32(at)) }
    func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
    func f32(_ at: Int) -> Float { Float(bitPattern: u32(at)) }

    /// A char[n] field: up to its first NUL, as UTF-8 (invalid sequences replaced).
    func text(_ at: Int, _ n: Int) -> String {
        let chars = (at..<(at + n)).map { u8($0) }
        return String(decoding: chars.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// A degE7 field (int32, 1e-7 degrees) in degrees.
    func degE7(_ at: Int) -> Double { Double(i32(at)) / 1e7 }
}
