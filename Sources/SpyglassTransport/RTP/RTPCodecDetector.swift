/// Decides H.264 or H.265 from RTP payload headers (RFC 6184 §5.3 / RFC 7798 §1.1.4).
///
/// Decisive: an H.265 payload header with `nuh_layer_id` 0, `nuh_temporal_id_plus1` 1 and type
/// VPS/SPS/PPS (32...34), AP (48) or FU (49); or an H.264 SPS/PPS (7, 8), STAP-A (24) or FU-A (28)
/// whose bytes do not also read as such an H.265 header. Otherwise scores decide after `maxPackets`.
import SpyglassBitstream
public struct RTPCodecDetector {
    /// The codec, once decided (it then stays decided).
    public private(set) var decided: VideoCodec?
    private var h264 = 0, h265 = 0, seen = 0
    /// Payloads looked at before deciding on scores alone.
    public let maxPackets: Int

    /// - Parameter maxPackets: payloads to see before deciding by score (default 32).
    public init(maxPackets: Int = 32) { self.maxPackets = maxPackets }

    /// The codec one payload proves on its own, or nil.
    public static func decisive(_ payload: ArraySlice<UInt8>) -> VideoCodec? {
        guard payload.count >= 2 else { return nil }
        let b0 = payload[payload.startIndex], b1 = payload[payload.startIndex + 1]
        let hType = (b0 >> 1) & 0x3F, layer = ((b0 & 1) << 5) | (b1 >> 3), tid = b1 & 7
        let h265Header = b0 & 0x80 == 0 && layer == 0 && tid >= 1
        if h265Header && tid == 1 && [32, 33, 34, 48, 49].contains(hType) { return .h265 }
        if b0 & 0x80 == 0 && [7, 8, 24, 28].contains(b0 & 0x1F) && !h265Header { return .h264 }
        return nil
    }

    /// The codec of a parameter set that a payload carries first, or nil: a single NAL unit
    /// packet, or the first unit of an H.264 STAP-A (RFC 6184 §5.7.1) or an H.265 AP without
    /// DONL (RFC 7798 §4.4.2), that ``CodecDetector/decisive(_:)`` proves (an H.265 VPS/SPS/PPS of
    /// layer 0 and temporal id 1, or an H.264 SPS with a known `profile_idc`).
    ///
    /// Stricter than ``decisive(_:)``, which also takes the AP/FU and STAP-A/FU-A payload types
    /// alone: this one is safe to overrule a codec that an SDP or the user named, because no
    /// valid stream of one codec carries such a unit of the other.
    public static func decisiveParameterSet(_ payload: ArraySlice<UInt8>) -> VideoCodec? {
        guard payload.count >= 4 else { return nil }
        let s = payload.startIndex, b0 = payload[s]
        if let c = CodecDetector.decisive(Array(payload.prefix(8))) { return c }
        // H.264 STAP-A: 1-byte header, 16-bit size, the first unit.
        if b0 & 0x80 == 0 && b0 & 0x1F == 24, payload.count >= 7,
           CodecDetector.decisive(Array(payload[(s + 3)...].prefix(8))) == .h264 { return .h264 }
        // H.265 AP (type 48, layer 0, temporal id 1): 2-byte header, 16-bit size, the first unit.
        if b0 == 0x60 && payload[s + 1] == 0x01, payload.count >= 8,
           CodecDetector.decisive(Array(payload[(s + 4)...].prefix(8))) == .h265 { return .h265 }
        return nil
    }

    /// Looks at one more payload.
    /// - Returns: the codec once decided (then it stays decided), else nil.
    public mutating func observe(_ payload: ArraySlice<UInt8>) -> VideoCodec? {
        if let decided { return decided }
        seen += 1
        if let d = Self.decisive(payload) { decided = d; return decided }
        if payload.count >= 2 {
            let b0 = payload[payload.startIndex], b1 = payload[payload.startIndex + 1]
            let hType = (b0 >> 1) & 0x3F, layer = ((b0 & 1) << 5) | (b1 >> 3), tid = b1 & 7
            let h265Header = b0 & 0x80 == 0 && layer == 0 && tid >= 1
            let aType = b0 & 0x1F
            if h265Header && (hType <= 21 || (32...40).contains(hType)) { h265 += 1 }
            if b0 & 0x80 == 0 && ((1...23).contains(aType) || aType == 24 || aType == 28) { h264 += 1 }
        }
        if seen >= maxPackets { decided = h265 > h264 ? .h265 : .h264 }
        return decided
    }
}
