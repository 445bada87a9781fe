/// The size of an MPEG-TS stream's packets, told from the spacing of their sync bytes (0x47).
///
/// - 188 bytes: transport packets as ISO/IEC 13818-1 §2.4.3.2 defines them.
/// - 192 bytes: each packet after a 4-byte `TP_extra_header` (2 bits of copy permission, a 30-bit
///   arrival time stamp): BDAV MPEG-2 transport streams, as AVCHD cameras (`.mts`) and Blu-ray
///   (`.m2ts`) write them.
/// - 204 bytes: each packet followed by 16 bytes of Reed-Solomon parity (ETSI EN 300 421 §4.4.2),
///   as DVB equipment may pass it on.
public enum TSPacketSize: Int, Sendable, CaseIterable {
    case standard = 188, timestamped = 192, withParity = 204

    /// Where the 188-byte transport packet begins inside each packet of this size, bytes.
    public var packetOffset: Int { self == .timestamped ? 4 : 0 }

    /// What the log and probe say about it.
    public var description: String {
        switch self {
        case .standard: return "188-byte packets"
        case .timestamped: return "192-byte packets (M2TS: a 4-byte arrival stamp before each, as AVCHD cameras and Blu-ray write)"
        case .withParity: return "204-byte packets (16 bytes of Reed-Solomon parity after each, as DVB equipment sends)"
        }
    }

    /// The size whose sync bytes stand at the start of every packet in `b`, or nil.
    ///
    /// 188 is taken on a whole number of packets (a datagram of one or more) or three sync bytes
    /// 188 apart (a byte stream's start). 192 and 204 need at least two whole packets or three
    /// sync bytes in a row, and are tried only when 188 does not fit: an Annex B datagram whose
    /// fifth byte happens to be 0x47 (an SPS header with `nal_ref_idc` 2) is not a 192-byte packet.
    ///
    /// `wholePackets` false: `b` is the start of a byte stream cut anywhere, so its length says
    /// nothing and only sync bytes in a row count; the answer then depends only on the bytes, not
    /// on where the stream was cut.
    public static func detect(_ b: UnsafeRawBufferPointer, wholePackets: Bool = true) -> TSPacketSize? {
        for size in allCases where fits(b, size, wholePackets: wholePackets) { return size }
        return nil
    }

    private static func fits(_ b: UnsafeRawBufferPointer, _ size: TSPacketSize, wholePackets: Bool) -> Bool {
        let s = size.rawValue, o = size.packetOffset
        guard b.count >= 188 + o, b[o] == 0x47 else { return false }
        if wholePackets && b.count % s == 0 && (size == .standard || b.count / s >= 2) {
            return stride(from: o, to: b.count, by: s).allSatisfy { b[$0] == 0x47 }
        }
        guard b.count > o + 2 * s else { return false }
        return (0..<3).allSatisfy { b[o + $0 * s] == 0x47 }
    }
}
