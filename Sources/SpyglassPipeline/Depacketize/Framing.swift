/// How a feed's bytes carry its video: the depacketizer a source's first chunk chooses from
/// ``DepacketizerRegistry``, and the name logs, the summary, `/metrics` and `probe` use for it.
public enum Framing: String, Sendable, CaseIterable, Codable {
    /// MPEG-TS (ISO/IEC 13818-1): 188-byte packets, sync byte 0x47; datagrams or a byte stream.
    case mpegTS = "mpeg-ts"
    /// MPEG-TS in RTP (RFC 2250: payload type 33, MP2T/90000).
    case rtpMPEGTS = "rtp-mpegts"
    /// H.264/H.265 in RTP (RFC 6184, RFC 7798; a dynamic payload type).
    case rtp
    /// Raw Annex B (ITU-T H.264 Annex B, H.265 Annex B): start codes, on datagrams or a byte stream.
    case annexB = "annex-b"

    /// Carried in RTP packets (sequence numbers, loss, RTCP).
    public var isRTP: Bool { self == .rtp || self == .rtpMPEGTS }

    /// Carried in MPEG-TS (PIDs, continuity counters, PES).
    public var carriesMPEGTS: Bool { self == .mpegTS || self == .rtpMPEGTS }

    /// What the log says when the framing was detected (raw Annex B, the fallback, says nothing).
    /// - Parameter forced: `--rtp` chose it, nothing was detected.
    func detectedNote(forced: Bool) -> String? {
        switch self {
        case .rtp: return "RTP" + (forced ? "" : " (detected: version 2, dynamic payload type)")
        case .rtpMPEGTS: return "MPEG-TS in RTP (detected: payload type 33, RFC 2250)"
        case .mpegTS: return "MPEG-TS (detected: the sync byte 0x47 at the start of every packet)"
        case .annexB: return nil
        }
    }
}
