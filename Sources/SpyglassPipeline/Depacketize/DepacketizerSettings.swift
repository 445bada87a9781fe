import SpyglassBitstream
import SpyglassTransport

/// What the depacketizers are told: the framing forced or detected (`--rtp`, `--raw`), the codec
/// (`--codec`), the SDP (`--sdp`, or an RTSP server's DESCRIBE), the RTP jitter buffer
/// (`--reorder-ms`), the idle flush, the cap on one unit and the MPEG-TS program or PID.
///
/// A value the feed derives from its options (`ReceiverOptions.depacketizer`); the stages never
/// see the command line.
public struct DepacketizerSettings: Sendable {
    /// How datagram payloads are read.
    public enum Transport: String, Sendable {
        /// RTP when datagrams look like RTP (version 2, dynamic payload type), else raw Annex B
        /// (or MPEG-TS, by its sync bytes).
        case auto
        /// RTP whatever the first datagram looks like (`--rtp`).
        case rtp
        /// Annex B whatever it looks like (`--raw`).
        case raw
    }
    /// `--rtp`/`--raw`, or detect.
    public var transport: Transport = .auto
    /// Codec to assume; nil = from the SDP or the NAL headers.
    public var codec: VideoCodec?
    /// RTP payload type, codec and parameter sets from an SDP.
    public var sdp: SessionDescription?
    /// RTP jitter buffer: longest wait for a missing packet, µs (0 = no wait).
    public var reorderWindowMicros = 0
    /// RTP: the header extension carrying capture times (`--rtp-ext ID=URI`); nil: the SDP's
    /// `a=extmap`, if any.
    public var captureExtension: CaptureTimeExtension?
    /// A live input idle this long after data ends the pending unit, µs (0 = never).
    public var idleFlushMicros = 1_000
    /// Cap on one NAL unit or PES payload, bytes.
    public var maxUnitBytes = 32 << 20
    /// The MPEG-TS program or video PID to play (`?program=`/`?pid=`).
    public var mpegtsSelection = MPEGTSSelection()
    /// RTP: ask the sender for a keyframe (RTCP PLI) when loss damages a picture or the stream
    /// is joined mid-way (`--keyframe-requests on|off`).
    public var keyframeRequests = true

    public init() {}
}
