/// The start of a PES packet (ISO/IEC 13818-1 §2.4.3.6-7): where its payload begins, how long
/// it is, and its PTS.
public struct PESHeader {
    /// Index of the first payload byte.
    public let payloadStart: Int
    /// Payload bytes from `PES_packet_length` (nil: unbounded, 0 in the header).
    public let payloadLength: Int?
    /// Presentation time stamp, 90 kHz ticks (33 bits), when present.
    public let pts: UInt64?

    /// Nil when the packet does not start with `00 00 01` or its header does not fit.
    public init?(_ d: ArraySlice<UInt8>) {
        let s = d.startIndex
        guard d.count >= 9, d[s] == 0, d[s + 1] == 0, d[s + 2] == 1 else { return nil }
        let length = Int(d[s + 4]) << 8 | Int(d[s + 5])
        let headerLength = Int(d[s + 8])
        guard s + 9 + headerLength <= d.endIndex, length == 0 || length >= 3 + headerLength else { return nil }
        payloadStart = s + 9 + headerLength
        payloadLength = length > 0 ? length - 3 - headerLength : nil
        if d[s + 7] & 0x80 != 0, headerLength >= 5 {
            let p = d[(s + 9)...(s + 13)].map(UInt64.init)
            pts = (p[0] >> 1 & 0x7) << 30 | p[1] << 22 | (p[2] >> 1) << 15 | p[3] << 7 | p[4] >> 1
        } else {
            pts = nil
        }
    }
}
