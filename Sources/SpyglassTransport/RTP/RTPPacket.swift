/// An RTP packet (RFC 3550 §5.1), parsed without copying the payload.
public struct RTPPacket: Sendable {
    /// Marker bit: for H.264/H.265 video, set on the last packet of an access unit
    /// (RFC 6184 §5.1, RFC 7798 §4.1).
    public let marker: Bool
    /// Payload type (96...127 are dynamic, as video uses).
    public let payloadType: UInt8
    /// Sequence number (wraps at 65536).
    public let sequenceNumber: UInt16
    /// Media timestamp, 90 kHz ticks for video.
    public let timestamp: UInt32
    /// Synchronization source.
    public let ssrc: UInt32
    /// Payload bytes (after CSRCs, header extension; padding removed).
    public let payload: ArraySlice<UInt8>
    /// The header extension (X bit, RFC 3550 §5.3.1), or nil.
    public let headerExtension: RTPHeaderExtension?

    /// Why a datagram is not a usable RTP packet.
    public enum ParseError: Error, Equatable {
        case tooShort, wrongVersion, badPadding, badExtension, badCSRCCount
    }

    /// Parses one datagram.
    /// - Throws: ``ParseError`` for a datagram that is not RTP version 2 or whose lengths do not fit.
    public init(datagram d: ArraySlice<UInt8>) throws {
        guard d.count >= 12 else { throw ParseError.tooShort }
        let s = d.startIndex
        let b0 = d[s], b1 = d[s + 1]
        guard b0 >> 6 == 2 else { throw ParseError.wrongVersion }
        let padding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        let csrcCount = Int(b0 & 0x0F)
        marker = b1 & 0x80 != 0
        payloadType = b1 & 0x7F
        sequenceNumber = UInt16(d[s + 2]) << 8 | UInt16(d[s + 3])
        timestamp = UInt32(d[s + 4]) << 24 | UInt32(d[s + 5]) << 16 | UInt32(d[s + 6]) << 8 | UInt32(d[s + 7])
        ssrc = UInt32(d[s + 8]) << 24 | UInt32(d[s + 9]) << 16 | UInt32(d[s + 10]) << 8 | UInt32(d[s + 11])
        var offset = s + 12 + 4 * csrcCount
        guard offset <= d.endIndex else { throw ParseError.badCSRCCount }
        if hasExtension {
            guard offset + 4 <= d.endIndex else { throw ParseError.badExtension }
            let profile = UInt16(d[offset]) << 8 | UInt16(d[offset + 1])
            let words = Int(d[offset + 2]) << 8 | Int(d[offset + 3])
            guard offset + 4 + 4 * words <= d.endIndex else { throw ParseError.badExtension }
            headerExtension = RTPHeaderExtension(profile: profile, data: d[(offset + 4)..<(offset + 4 + 4 * words)])
            offset += 4 + 4 * words
        } else {
            headerExtension = nil
        }
        var end = d.endIndex
        if padding {
            guard end > offset else { throw ParseError.badPadding }
            let pad = Int(d[end - 1])
            guard pad >= 1, pad <= end - offset else { throw ParseError.badPadding }
            end -= pad
        }
        payload = d[offset..<end]
    }

    /// True when `d` looks like RTP carrying video: version 2 and a dynamic payload type.
    /// (An Annex B stream starts with zero bytes, so its version field reads 0.)
    public static func looksLikeRTP<Bytes: Collection<UInt8>>(_ d: Bytes) -> Bool where Bytes.Index == Int {
        guard d.count >= 12 else { return false }
        let s = d.startIndex
        return d[s] >> 6 == 2 && (96...127).contains(d[s + 1] & 0x7F)
    }

    /// The fixed header's sequence number, timestamp and SSRC (RFC 3550 §5.1), read in place
    /// without parsing the rest: for the per-datagram questions a source or the receiver reports
    /// ask. Nil when `d` is shorter than 12 bytes or not version 2.
    public static func fixedHeader(_ d: UnsafeRawBufferPointer) -> (sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32)? {
        guard d.count >= 12, d[0] >> 6 == 2 else { return nil }
        return (UInt16(d[2]) << 8 | UInt16(d[3]),
                UInt32(d[4]) << 24 | UInt32(d[5]) << 16 | UInt32(d[6]) << 8 | UInt32(d[7]),
                UInt32(d[8]) << 24 | UInt32(d[9]) << 16 | UInt32(d[10]) << 8 | UInt32(d[11]))
    }

    /// Serializes a packet (no CSRCs, no extension, no padding).
    public static func build(marker: Bool, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
                             ssrc: UInt32, payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80, (marker ? 0x80 : 0) | (payloadType & 0x7F),
                            UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF),
                            UInt8(timestamp >> 24), UInt8((timestamp >> 16) & 0xFF), UInt8((timestamp >> 8) & 0xFF), UInt8(timestamp & 0xFF),
                            UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)]
        out.reserveCapacity(12 + payload.count)
        out += payload
        return out
    }
}
