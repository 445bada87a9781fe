/// An RTCP compound packet (RFC 3550 §6), parsed once into its parts: sender reports
/// (§6.4.1) with their sender info, and the type of every other part (RR, SDES, BYE with its
/// SSRCs, APP, RTPFB/PSFB feedback of RFC 4585 §6.1), each walked over by its length.
public enum RTCPPacket {
    /// One packet of a compound packet.
    public enum Part: Equatable, Sendable {
        /// A sender report (type 200).
        case senderReport(SenderReport)
        /// A receiver report (type 201) from `ssrc`.
        case receiverReport(ssrc: UInt32)
        /// Source description items (type 202), not read further.
        case sourceDescription
        /// BYE (type 203, §6.6): these sources leave the session.
        case goodbye(ssrcs: [UInt32])
        /// Transport-layer (205) or payload-specific (206) feedback (RFC 4585 §6.1), with its
        /// feedback message type (FMT: 1 = PLI, 4 = FIR, RFC 5104 §4.3.1).
        case feedback(packetType: UInt8, format: UInt8)
        /// Any other packet type (APP, XR, …).
        case other(packetType: UInt8)
    }

    /// A sender report's sender info (RFC 3550 §6.4.1): which NTP wall-clock instant the RTP
    /// timestamp `rtpTimestamp` stands for.
    public struct SenderReport: Equatable, Sendable {
        /// SSRC of the sender (whose RTP stream the timestamps belong to).
        public var ssrc: UInt32
        /// NTP timestamp, 64-bit fixed point: seconds since 1900-01-01 UTC in the high 32 bits,
        /// the fraction of a second in the low 32 (RFC 3550 §4).
        public var ntpTimestamp: UInt64
        /// The RTP timestamp of the same instant, in the stream's clock (90 kHz ticks for video).
        public var rtpTimestamp: UInt32
        /// Packets and payload octets sent so far.
        public var packetCount: UInt32
        public var octetCount: UInt32

        /// The middle 32 bits of the NTP timestamp: what a receiver report echoes as LSR (§6.4.1).
        public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }
    }

    /// Why a datagram is not a usable RTCP compound packet.
    public enum ParseError: Error, Equatable {
        /// Shorter than a header, version not 2, a length running past the end, or a sender
        /// report shorter than its sender info.
        case malformed
    }

    /// Packet type of a sender report (RFC 3550 §12.1).
    public static let senderReportType: UInt8 = 200
    /// Packet type of a receiver report.
    public static let receiverReportType: UInt8 = 201

    /// True when `d` starts like RTCP rather than RTP: version 2 and a packet type in 192...223,
    /// which RTP payload types with the marker bit never take (RFC 5761 §4). A cheap test to route
    /// datagrams; ``senderReports(in:)`` checks the lengths.
    public static func looksLikeRTCP(_ d: UnsafeRawBufferPointer) -> Bool {
        d.count >= 8 && d[0] >> 6 == 2 && (192...223).contains(d[1])
    }

    /// Every part of a compound packet, in order.
    /// - Parameter d: one datagram (UDP) or one interleaved frame (RTSP over TCP).
    /// - Throws: ``ParseError/malformed`` when a header or length does not fit (RFC 3550 §6.1);
    ///   nothing is returned from such a packet, so a bad one is one counted drop.
    public static func parts(of d: UnsafeRawBufferPointer) throws -> [Part] {
        var parts: [Part] = []
        var offset = 0
        while offset < d.count {
            guard d.count - offset >= 4, d[offset] >> 6 == 2 else { throw ParseError.malformed }
            let length = 4 * ((Int(d[offset + 2]) << 8 | Int(d[offset + 3])) + 1)
            guard length <= d.count - offset else { throw ParseError.malformed }
            let count = Int(d[offset] & 0x1F)   // RC, SC or FMT
            let word = { (at: Int) in readUInt32(d, offset + at) }
            switch d[offset + 1] {
            case senderReportType:
                guard length >= 28 else { throw ParseError.malformed }
                parts.append(.senderReport(SenderReport(ssrc: word(4), ntpTimestamp: UInt64(word(8)) << 32 | UInt64(word(12)),
                                                        rtpTimestamp: word(16), packetCount: word(20), octetCount: word(24))))
            case receiverReportType:
                guard length >= 8 else { throw ParseError.malformed }
                parts.append(.receiverReport(ssrc: word(4)))
            case 202: parts.append(.sourceDescription)
            case 203:
                guard length >= 4 + 4 * count else { throw ParseError.malformed }
                parts.append(.goodbye(ssrcs: (0..<count).map { word(4 + 4 * $0) }))
            case 205, 206: parts.append(.feedback(packetType: d[offset + 1], format: UInt8(count)))
            default: parts.append(.other(packetType: d[offset + 1]))
            }
            offset += length
        }
        return parts
    }

    /// The sender reports in a compound packet, in order (``parts(of:)``, filtered).
    /// - Throws: ``ParseError/malformed`` as ``parts(of:)`` does.
    public static func senderReports(in d: UnsafeRawBufferPointer) throws -> [SenderReport] {
        try parts(of: d).compactMap { if case .senderReport(let sr) = $0 { return sr } else { return nil } }
    }

    /// An SDES packet (type 202, RFC 3550 §6.5) with one chunk: `ssrc` and its CNAME item,
    /// padded to a 32-bit boundary. Every compound packet carries one (§6.1).
    public static func sourceDescription(ssrc: UInt32, cname: String) -> [UInt8] {
        let name = Array(cname.utf8.prefix(255))
        var chunk = bigEndian(ssrc) + [1, UInt8(name.count)] + name + [0]
        while chunk.count % 4 != 0 { chunk.append(0) }
        return [0x81, 202, 0, UInt8(chunk.count / 4)] + chunk
    }

    /// `w` as 4 bytes, most significant first (network order).
    public static func bigEndian(_ w: UInt32) -> [UInt8] {
        [UInt8(w >> 24), UInt8((w >> 16) & 0xFF), UInt8((w >> 8) & 0xFF), UInt8(w & 0xFF)]
    }

    private static func readUInt32(_ d: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(d[at]) << 24 | UInt32(d[at + 1]) << 16 | UInt32(d[at + 2]) << 8 | UInt32(d[at + 3])
    }
}
