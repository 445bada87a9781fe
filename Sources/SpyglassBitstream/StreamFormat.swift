import Foundation

/// What an SPS says about the pictures: the summary used for logs, display set-up and probes.
public struct StreamFormat: Equatable, Sendable, CustomStringConvertible {
    public var codec: VideoCodec
    /// Displayed size after cropping (H.264 frame cropping, H.265 conformance window), luma samples.
    public var width: Int
    public var height: Int
    /// Bits per luma sample (8...16).
    public var bitDepth: Int
    /// `chroma_format_idc`: 0 = 4:0:0, 1 = 4:2:0, 2 = 4:2:2, 3 = 4:4:4.
    public var chromaFormatIdc: Int
    /// Frames per second from VUI timing, nil when the SPS has none.
    public var frameRate: Double?
    /// `video_full_range_flag` from the VUI (false when absent).
    public var fullRange: Bool
    /// `matrix_coefficients` (ITU-T H.273; 2 = unspecified).
    public var matrixCoefficients: Int
    /// Pictures the decoder may hold back for reordering, when the VUI says (`max_num_reorder_frames`).
    public var maxNumReorderFrames: Int?
    /// Profile (`profile_idc` / `general_profile_idc`) and level (`level_idc` / `general_level_idc`).
    public var profileIdc: Int
    public var levelIdc: Int

    /// Chroma format as "4:2:0" etc.
    public var chromaName: String {
        switch chromaFormatIdc { case 0: return "4:0:0"; case 2: return "4:2:2"; case 3: return "4:4:4"; default: return "4:2:0" }
    }

    public var description: String {
        var s = "\(width)x\(height) \(chromaName) \(bitDepth)-bit"
        if let frameRate { s += String(format: " %.3f fps", frameRate) }
        return s
    }
}

extension StreamFormat {
    /// Summary of an H.264 SPS.
    public init(_ s: H264SPS) {
        self.init(codec: .h264, width: s.width, height: s.height, bitDepth: Int(s.bitDepthLuma),
                  chromaFormatIdc: Int(s.chromaFormatIdc), frameRate: s.frameRate,
                  fullRange: s.videoFullRangeFlag, matrixCoefficients: Int(s.matrixCoefficients),
                  maxNumReorderFrames: s.maxNumReorderFrames.map { Int($0) },
                  profileIdc: Int(s.profileIdc), levelIdc: Int(s.levelIdc))
    }
    /// Summary of an H.265 SPS.
    public init(_ s: H265SPS) {
        self.init(codec: .h265, width: s.width, height: s.height, bitDepth: Int(s.bitDepthLuma),
                  chromaFormatIdc: Int(s.chromaFormatIdc), frameRate: s.frameRate,
                  fullRange: s.videoFullRangeFlag, matrixCoefficients: Int(s.matrixCoefficients),
                  maxNumReorderFrames: Int(s.spsMaxNumReorderPics),
                  profileIdc: Int(s.generalProfileIdc), levelIdc: Int(s.generalLevelIdc))
    }
}
