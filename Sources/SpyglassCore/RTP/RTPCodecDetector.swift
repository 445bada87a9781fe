/// Decides H.264 or H.265 from RTP payload headers (RFC 6184 §5.3 / RFC 7798 §1.1.4).
///
/// Decisive: an H.265 payload header with `nuh_layer_id` 0, `nuh_temporal_id_plus1` 1 and type
/// VPS/SPS/PPS (32...34), AP (48) or FU (49); or an H.264 SPS/PPS (7, 8), STAP-A (24) or FU-A (28)
/// whose bytes do not also read as such an H.265 header. Otherwise scores decide after `maxPackets`.
public struct RTPCodecDetector {
    public private(set) var decided: VideoCodec?
    private var h264 = 0, h265 = 0, seen = 0
    public let maxPackets: Int

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
