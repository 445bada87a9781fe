/// The parts of an RTCP compound packet (RFC 3550 §6) a receiver needs: the sender reports
/// (§6.4.1). Other packet types (RR, SDES, BYE, APP, feedback) are walked over by their length.
public enum RTCPPacket {
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

    /// The sender reports in a compound packet, in order.
    /// - Parameter d: one datagram (UDP) or one interleaved frame (RTSP over TCP).
    /// - Throws: ``ParseError/malformed`` when a header or length does not fit (RFC 3550 §6.1);
    ///   nothing is returned from such a packet, so a bad one is one counted drop.
    public static func senderReports(in d: UnsafeRawBufferPointer) throws -> [SenderReport] {
        var reports: [SenderReport] = []
        var offset = 0
        while offset < d.count {
            guard d.count - offset >= 4, d[offset] >> 6 == 2 else { throw ParseError.malformed }
            let length = 4 * ((Int(d[offset + 2]) << 8 | Int(d[offset + 3])) + 1)
            guard length <= d.count - offset else { throw ParseError.malformed }
            if d[offset + 1] == senderReportType {
                guard length >= 28 else { throw ParseError.malformed }
                let word = { (at: Int) in readUInt32(d, offset + at) }
                reports.append(SenderReport(ssrc: word(4), ntpTimestamp: UInt64(word(8)) << 32 | UInt64(word(12)),
                                            rtpTimestamp: word(16), packetCount: word(20), octetCount: word(24)))
            }
            offset += length
        }
        return reports
    }

    private static func readUInt32(_ d: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(d[at]) << 24 | UInt32(d[at + 1]) << 16 | UInt32(d[at + 2]) << 8 | UInt32(d[at + 3])
    }
}
