import SpyglassBitstream
import SpyglassTransport

/// What the access-unit stage is told: the codec (`--codec`, authoritative), the SDP (a hint,
/// with its `sprop-*` parameter sets), the cap on one access unit (`--max-au-mb`) and on the
/// picture size an SPS may claim (`--max-size`, luma samples).
///
/// A value the feed derives from its options (`ReceiverOptions.assembly`).
public struct AssemblySettings: Sendable {
    /// Codec to assume; nil = from the SDP or the NAL headers.
    public var codec: VideoCodec?
    /// The SDP, when there is one.
    public var sdp: SessionDescription?
    /// Cap on one access unit, bytes.
    public var maxAccessUnitBytes = 32 << 20
    /// Cap on the picture width an SPS may claim, luma samples.
    public var maxPictureWidth = PictureSizeCap.default.width
    /// Cap on the picture height an SPS may claim, luma samples.
    public var maxPictureHeight = PictureSizeCap.default.height

    public init() {}
}
