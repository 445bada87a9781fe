/// Errors from reading bitstream syntax.
public enum BitstreamError: Error, Equatable, CustomStringConvertible {
    /// The syntax ran past the end of the RBSP.
    case truncated(String)
    /// A syntax element holds a value the specification forbids.
    case invalid(String)
    /// The syntax is legal but beyond what Spyglass accepts (for example a picture over the size cap).
    case unsupported(String)

    /// "truncated: …", "invalid: …" or "unsupported: …", for a one-line message.
    public var description: String {
        switch self {
        case .truncated(let s): return "truncated: \(s)"
        case .invalid(let s): return "invalid: \(s)"
        case .unsupported(let s): return "unsupported: \(s)"
        }
    }
}

/// Reads bits MSB-first from an RBSP (emulation prevention already removed), with the
/// descriptors of ITU-T H.264 §7.2 / H.265 §7.2: `u(n)`, `ue(v)`, `se(v)` (Exp-Golomb, §9.1).
public struct BitReader {
    /// The RBSP being read (no emulation prevention bytes).
    public let bytes: [UInt8]
    /// Position in bits from the start of `bytes`.
    public private(set) var bitPosition: Int = 0

    /// A reader at bit 0 of `bytes`.
    /// - Parameter bytes: the RBSP to read (unescape NAL unit bytes with ``RBSP/unescape(_:)`` first).
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Bits not yet read.
    public var bitsLeft: Int { bytes.count * 8 - bitPosition }

    /// Reads one bit (`u(1)`). Throws `BitstreamError.truncated` past the end.
    public mutating func bit() throws -> Bool {
        guard bitPosition < bytes.count * 8 else { throw BitstreamError.truncated("bit at \(bitPosition)") }
        let b = bytes[bitPosition >> 3] >> (7 - UInt8(bitPosition & 7)) & 1
        bitPosition += 1
        return b == 1
    }

    /// Reads `n` bits (0...32) as an unsigned value (`u(n)`). Throws `BitstreamError.truncated`.
    public mutating func bits(_ n: Int) throws -> UInt32 {
        precondition(n >= 0 && n <= 32)
        guard n <= bitsLeft else { throw BitstreamError.truncated("u(\(n)) at \(bitPosition)") }
        var v: UInt32 = 0
        for _ in 0..<n { v = (v << 1) | (try bit() ? 1 : 0) }
        return v
    }

    /// Skips `n` bits. Throws `BitstreamError.truncated`.
    public mutating func skip(_ n: Int) throws {
        guard n >= 0, n <= bitsLeft else { throw BitstreamError.truncated("skip \(n) at \(bitPosition)") }
        bitPosition += n
    }

    /// Reads an unsigned Exp-Golomb code `ue(v)` (H.264 §9.1), up to 2^32 − 2.
    /// Throws `BitstreamError.truncated`, or `.invalid` for a code longer than 32 bits.
    public mutating func ue() throws -> UInt32 {
        var leadingZeros = 0
        while try !bit() {
            leadingZeros += 1
            if leadingZeros > 31 { throw BitstreamError.invalid("ue(v) longer than 32 bits") }
        }
        if leadingZeros == 0 { return 0 }
        let rest = try bits(leadingZeros)
        return UInt32((UInt64(1) << leadingZeros) - 1 + UInt64(rest))
    }

    /// Reads a signed Exp-Golomb code `se(v)` (H.264 §9.1.1).
    public mutating func se() throws -> Int32 {
        let k = try ue()
        let magnitude = Int32(truncatingIfNeeded: (UInt64(k) + 1) / 2)
        return k & 1 == 1 ? magnitude : -magnitude
    }

    /// Reads `ue(v)` and checks it against an inclusive upper bound from the spec.
    /// Throws `BitstreamError.invalid("<name> = v > max")`.
    public mutating func ue(max: UInt32, _ name: String) throws -> UInt32 {
        let v = try ue()
        guard v <= max else { throw BitstreamError.invalid("\(name) = \(v) > \(max)") }
        return v
    }

    /// Reads `u(1)` as a flag.
    public mutating func flag() throws -> Bool { try bit() }
}
