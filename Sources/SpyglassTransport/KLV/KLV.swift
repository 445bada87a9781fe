/// SMPTE ST 336 key-length-value coding: a 16-byte universal label, a BER length, the value.
///
/// Bad input (a length running past the end, a BER length longer than 4 bytes) is reported as
/// nil, never trusted: the caller counts a drop.
public enum KLV {
    /// One KLV packet: its key and its value, as slices of the input.
    public struct Packet {
        public var key: ArraySlice<UInt8>
        public var value: ArraySlice<UInt8>
        /// The whole packet, key to the end of the value (what a checksum covers).
        public var bytes: ArraySlice<UInt8>
    }

    /// Reads a BER length (ST 336 §6.3.4 / X.690 §8.1.3): short form below 128, else `0x80 | n`
    /// and `n` (1...4) big-endian bytes.
    /// - Returns: the length and the index after it, or nil when it does not fit or is longer
    ///   than 4 bytes.
    public static func berLength(_ d: ArraySlice<UInt8>, at i: Int) -> (length: Int, next: Int)? {
        guard i < d.endIndex else { return nil }
        let first = d[i]
        if first < 0x80 { return (Int(first), i + 1) }
        let n = Int(first & 0x7F)
        guard (1...4).contains(n), i + 1 + n <= d.endIndex else { return nil }
        return (d[(i + 1)...(i + n)].reduce(0) { $0 << 8 | Int($1) }, i + 1 + n)
    }

    /// A BER-OID tag (MISB ST 0601 §6.1: 7 bits a byte, the high bit says more follow), at most 4 bytes.
    /// - Returns: the tag and the index after it, or nil.
    public static func berOID(_ d: ArraySlice<UInt8>, at start: Int) -> (tag: Int, next: Int)? {
        var tag = 0
        var i = start
        while i < d.endIndex, i - start < 4 {
            tag = tag << 7 | Int(d[i] & 0x7F)
            i += 1
            if d[i - 1] & 0x80 == 0 { return (tag, i) }
        }
        return nil
    }

    /// The 16-byte-key packets of `d`, in order, as far as they are well formed.
    /// - Returns: the packets, and whether all of `d` was well formed (false: a count for the caller).
    public static func packets(_ d: ArraySlice<UInt8>) -> (packets: [Packet], wellFormed: Bool) {
        var out: [Packet] = []
        var i = d.startIndex
        while i < d.endIndex {
            guard i + 16 < d.endIndex, let (length, valueStart) = berLength(d, at: i + 16),
                  length <= d.endIndex - valueStart else { return (out, false) }
            out.append(Packet(key: d[i..<(i + 16)], value: d[valueStart..<(valueStart + length)], bytes: d[i..<(valueStart + length)]))
            i = valueStart + length
        }
        return (out, true)
    }

    /// A BER length as bytes (short form below 128, else the shortest long form).
    public static func encodeLength(_ n: Int) -> [UInt8] {
        if n < 0x80 { return [UInt8(n)] }
        var bytes: [UInt8] = []
        var v = n
        while v > 0 { bytes.insert(UInt8(v & 0xFF), at: 0); v >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
