/// Decides whether an Annex B stream is H.264 or H.265 from its first NAL unit headers.
///
/// Decisive evidence (ITU-T H.264 Table 7-1, H.265 Table 7-1):
/// - H.264: an SPS (type 7, `nal_ref_idc` ≠ 0) whose next byte is a known `profile_idc`,
///   or an AUD (type 9) of two bytes.
/// - H.265: a VPS/SPS/PPS/AUD (types 32...35) with `nuh_layer_id` 0 and `nuh_temporal_id_plus1` 1.
/// Without decisive evidence, each unit scores for the codec whose header it fits; the
/// higher score wins after `maxUnits` units.
public struct CodecDetector {
    public private(set) var decided: VideoCodec?
    private var scores: [VideoCodec: Int] = [.h264: 0, .h265: 0]
    private var seen = 0
    /// Units looked at before deciding on scores alone.
    public let maxUnits: Int

    /// - Parameter maxUnits: units to see before deciding by score (default 32).
    public init(maxUnits: Int = 32) { self.maxUnits = maxUnits }

    private static let h264Profiles: Set<UInt8> = [66, 77, 88, 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// Looks at one more NAL unit.
    /// - Returns: the codec once decided (then stays decided), else nil.
    public mutating func observe(_ unit: [UInt8]) -> VideoCodec? {
        if let decided { return decided }
        seen += 1
        guard unit.count >= 2, unit[0] & 0x80 == 0 else { return scoreDecision() }
        let h264Type = unit[0] & 0x1F
        let h264Ref = unit[0] >> 5
        let h265Type = (unit[0] >> 1) & 0x3F
        let h265Layer = ((unit[0] & 1) << 5) | (unit[1] >> 3)
        let h265Tid = unit[1] & 7

        if h265Layer == 0 && h265Tid == 1 && (32...35).contains(h265Type) {
            decided = .h265; return decided
        }
        if h264Type == 7 && h264Ref != 0 && Self.h264Profiles.contains(unit[1]) {
            decided = .h264; return decided
        }
        if h264Type == 9 && unit.count == 2 && unit[1] & 0x1F == 0x10 {
            decided = .h264; return decided
        }
        if (1...12).contains(h264Type) { scores[.h264, default: 0] += 1 }
        if h265Layer == 0 && h265Tid >= 1 && (h265Type <= 21 || (32...40).contains(h265Type)) {
            scores[.h265, default: 0] += 1
        }
        return scoreDecision()
    }

    /// The codec a unit proves on its own: an H.265 VPS/SPS/PPS (layer 0, temporal id 1) or an
    /// H.264 SPS with a known `profile_idc`. Neither can appear in a valid stream of the other
    /// codec, so such a unit in the middle of a stream means the sender switched codec.
    public static func decisive(_ unit: [UInt8]) -> VideoCodec? {
        guard unit.count >= 4, unit[0] & 0x80 == 0 else { return nil }
        if (unit[0] == 0x40 || unit[0] == 0x42 || unit[0] == 0x44) && unit[1] == 0x01 { return .h265 }
        if unit[0] & 0x1F == 7 && unit[0] >> 5 != 0 && h264Profiles.contains(unit[1]) { return .h264 }
        return nil
    }

    private mutating func scoreDecision() -> VideoCodec? {
        guard seen >= maxUnits else { return nil }
        decided = scores[.h265, default: 0] > scores[.h264, default: 0] ? .h265 : .h264
        return decided
    }
}
