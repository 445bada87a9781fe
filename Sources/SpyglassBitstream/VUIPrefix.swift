/// A sample aspect ratio, kept in a struct so that the parameter sets stay Hashable.
struct AspectRatio: Sendable, Hashable {
    var num: Int
    var den: Int
}

/// The start of `vui_parameters()`, the same in ITU-T H.264 §E.1.1 and H.265 §E.2.1:
/// aspect ratio, overscan, video signal type (format, range, colour description) and chroma
/// sample location. Each SPS parser reads this, then its own codec's remaining VUI fields.
struct VUIPrefix: Sendable {
    /// Sample aspect ratios of Table E-1 (both standards) for aspect_ratio_idc 1...16.
    static let sampleAspectRatios: [(Int, Int)] = [
        (1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11),
        (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1),
    ]

    var sar: AspectRatio?
    /// `video_format` (5 = unspecified when absent).
    var videoFormat = 5
    var videoFullRangeFlag = false
    /// ITU-T H.273 code points, 2 = unspecified when absent.
    var colourPrimaries = 2
    var transferCharacteristics = 2
    var matrixCoefficients = 2

    /// Reads the prefix. Throws ``BitstreamError`` when the RBSP ends inside it.
    init(_ r: inout BitReader) throws {
        if try r.flag() { // aspect_ratio_info_present_flag
            let idc = Int(try r.bits(8))
            if idc == 255 { // Extended_SAR
                let w = Int(try r.bits(16))
                let h = Int(try r.bits(16))
                sar = (w > 0 && h > 0) ? AspectRatio(num: w, den: h) : nil
            } else if idc >= 1 && idc <= 16 {
                let e = Self.sampleAspectRatios[idc - 1]
                sar = AspectRatio(num: e.0, den: e.1)
            }
        }
        if try r.flag() { // overscan_info_present_flag
            _ = try r.flag() // overscan_appropriate_flag
        }
        if try r.flag() { // video_signal_type_present_flag
            videoFormat = Int(try r.bits(3))
            videoFullRangeFlag = try r.flag()
            if try r.flag() { // colour_description_present_flag
                colourPrimaries = Int(try r.bits(8))
                transferCharacteristics = Int(try r.bits(8))
                matrixCoefficients = Int(try r.bits(8))
            }
        }
        if try r.flag() { // chroma_loc_info_present_flag
            _ = try r.ue(max: 5, "chroma_sample_loc_type_top_field")
            _ = try r.ue(max: 5, "chroma_sample_loc_type_bottom_field")
        }
    }
}
