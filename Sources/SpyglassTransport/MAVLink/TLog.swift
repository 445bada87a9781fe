/// The telemetry log of MAVProxy, Mission Planner and QGroundControl (.tlog): records of an
/// 8-byte big-endian timestamp, µs since the Unix epoch (UTC), then one MAVLink frame's bytes as
/// received. (pymavlink mavutil: `mavfile.recv_msg` writes `struct.pack('>Q', usec) +
/// msg.get_msgbuf()`; MAVProxy clears the low two bits, which its reader takes as a link number.)
public enum TLog {
    /// One record: `utcMicros` big-endian, then `frame.raw`.
    public static func record(frame: MAVLinkFrame, utcMicros: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: utcMicros >> (56 - 8 * UInt64($0))) } + frame.raw
    }

    /// The records of a .tlog, in order.
    ///
    /// A record counts when its packet part, as long as its header claims, is exactly one good
    /// frame to ``MAVLinkParser/frame(exactly:dialect:)`` (magic, flags, known id, CRC).
    /// Anything else (a damaged record, a truncated tail) is stepped over a byte at a time until
    /// records line up again: at most 280 bytes are checked at each offset.
    /// - Parameter dialect: the messages whose frames can be checked (default: common.xml).
    public static func read(_ bytes: some Collection<UInt8>, dialect: MAVLinkDialect = .common)
        -> [(utcMicros: UInt64, frame: MAVLinkFrame)] {
        let d = Array(bytes)
        var out: [(utcMicros: UInt64, frame: MAVLinkFrame)] = []
        var i = 0
        while i + 8 < d.count {
            if let length = frameLength(d, at: i + 8), i + 8 + length <= d.count,
               let frame = MAVLinkParser.frame(exactly: d[(i + 8)..<(i + 8 + length)], dialect: dialect) {
                out.append((d[i..<(i + 8)].reduce(0) { $0 << 8 | UInt64($1) }, frame))
                i += 8 + length
            } else {
                i += 1
            }
        }
        return out
    }

    /// The length a frame starting at `d[start]` claims (header, payload, CRC, signature), or
    /// nil when no magic byte is there or its header is not all present.
    static func frameLength(_ d: [UInt8], at start: Int) -> Int? {
        guard start + 3 <= d.count else { return nil }
        switch d[start] {
        case MAVLinkFrame.magicV2:
            let signature = d[start + 2] & MAVLinkFrame.flagSigned != 0 ? MAVLinkFrame.signatureLength : 0
            return 10 + Int(d[start + 1]) + 2 + signature
        case MAVLinkFrame.magicV1:
            return 6 + Int(d[start + 1]) + 2
        default:
            return nil
        }
    }
}
