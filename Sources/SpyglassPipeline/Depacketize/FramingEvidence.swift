/// Whether a run of datagrams carries a stream of a framing, as positive evidence: what
/// ``AutoDepacketizer`` asks before it changes the framing, so that garbage (random bytes,
/// RTP headers with random payload types and SSRCs) never flips it.
///
/// "Does not fit the framing in use" is no evidence of another one: a flood of random datagrams
/// fits neither. Each rule here asks for structure that random bytes have about no chance of
/// showing in a run of ``AutoDepacketizer/redecideAfter`` datagrams.
enum FramingEvidence {
    /// RTP packets of one SSRC and payload type, each sequence number the last + 1, needed for
    /// RTP (RFC 3550 §A.1 validates a source by `MIN_SEQUENTIAL` packets in sequence; 8 here,
    /// since garbage from one source comes at the rate of a flood).
    static let rtpInSequence = 8
    /// Annex B start codes followed by a NAL unit header with `forbidden_zero_bit` 0 (ITU-T
    /// H.264 §7.3.1, H.265 §7.3.1.2), or MPEG-TS datagrams, needed.
    static let markers = 3

    /// True when `run` shows a stream of `framing`.
    static func shows(_ framing: Framing, in run: [[UInt8]]) -> Bool {
        switch framing {
        case .rtp: return rtpInSequence(run, payloadTypes: 96...127)
        case .rtpMPEGTS: return rtpInSequence(run, payloadTypes: RTPMPEGTSDepacketizer.payloadType...RTPMPEGTSDepacketizer.payloadType)
        case .mpegTS:
            return run.count { d in d.withUnsafeBytes { AutoDepacketizer.looksLikeMPEGTS($0) || AutoDepacketizer.continuesMPEGTS($0) } } >= markers
        case .annexB: return startCodes(run, atLeast: markers)
        }
    }

    /// True when `rtpInSequence` packets of one SSRC and payload type follow each other in
    /// sequence (other datagrams may come between them).
    static func rtpInSequence(_ run: [[UInt8]], payloadTypes: ClosedRange<UInt8>) -> Bool {
        var streams: [UInt32: (payloadType: UInt8, sequence: UInt16, inSequence: Int)] = [:]
        for d in run where d.count >= 12 && d[0] >> 6 == 2 && payloadTypes.contains(d[1] & 0x7F) {
            let ssrc = UInt32(d[8]) << 24 | UInt32(d[9]) << 16 | UInt32(d[10]) << 8 | UInt32(d[11])
            let pt = d[1] & 0x7F, sequence = UInt16(d[2]) << 8 | UInt16(d[3])
            let last = streams[ssrc]
            let n = last.map { $0.payloadType == pt && sequence == $0.sequence &+ 1 ? $0.inSequence + 1 : 1 } ?? 1
            if n >= rtpInSequence { return true }
            streams[ssrc] = (pt, sequence, n)
        }
        return false
    }

    /// True when the run holds at least `count` Annex B start codes (00 00 01) followed by a
    /// byte whose top bit (`forbidden_zero_bit`) is 0.
    static func startCodes(_ run: [[UInt8]], atLeast count: Int) -> Bool {
        var found = 0
        for d in run where d.count >= 4 {
            var i = 0
            while i + 3 < d.count {
                if d[i + 2] > 1 { i += 3; continue }   // no start code can end at i + 2 or before
                if d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1 && d[i + 3] & 0x80 == 0 {
                    found += 1
                    if found >= count { return true }
                    i += 3
                } else {
                    i += 1
                }
            }
        }
        return false
    }
}
