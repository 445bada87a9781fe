/// A cap on the picture size a sequence parameter set may announce: the cropped width and
/// height, in luma samples. An SPS over it is refused (``BitstreamError/unsupported(_:)``)
/// before a decoder allocates for its pictures; `--max-size WxH` sets it.
public struct PictureSizeCap: Sendable, Hashable, CustomStringConvertible {
    /// Widest picture accepted, in luma samples.
    public var width: Int
    /// Tallest picture accepted, in luma samples.
    public var height: Int

    /// A cap of `width` x `height` luma samples.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// 8192x4320 luma samples, the default everywhere a cap is taken (`--max-size`, the
    /// parsers, the parameter-set store, the assembler, the receiver options), and the largest
    /// test pattern `spyglass send` makes.
    ///
    /// It is the largest picture of the highest levels, 6 to 6.2: its 35,389,440 samples fit
    /// H.264's MaxFS of 139,264 macroblocks (ITU-T H.264 Table A-1) and H.265's MaxLumaPs of
    /// 35,651,584 samples (ITU-T H.265 §A.4.1, general tier and level limits). A larger SPS is
    /// damaged or hostile (a decoder would allocate for it).
    public static let `default` = PictureSizeCap(width: 8192, height: 4320)

    /// "WxH", e.g. "8192x4320".
    public var description: String { "\(width)x\(height)" }
}
