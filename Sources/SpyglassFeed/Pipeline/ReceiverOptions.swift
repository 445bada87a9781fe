/// How a receiver runs: what `spyglass play` options set.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
public struct ReceiverOptions: Sendable {
    /// Codec to assume; nil = detect from the NAL headers.
    public var codec: VideoCodec?
    /// Frame rate for files and stdin when given (overrides VUI timing).
    public var fps: Double?
    /// Play files and stdin as fast as possible.
    public var untimed = false
    /// Stop after this many decoded frames.
    public var maxFrames: Int?
    /// Stop after this many seconds with no data.
    public var timeoutSeconds: Double?
    /// A live input idle this long after data ends the pending NAL unit and access unit, µs.
    /// 0 disables (then an access unit ends only when the next one starts).
    public var idleFlushMicros = 1_000
    /// A live input silent this long closes its decoder, µs (10 s; 0 = never), so that the
    /// memory of its pictures and pools (about 115 MB for a 4K HEVC stream) goes back when a
    /// stream ends, not at exit (issue 17: within 60 s of a burst ending). The next data opens a
    /// new decoder, primed with the parameter sets, and waits for a keyframe as after a join.
    public var decoderIdleReleaseMicros: UInt64 = 10_000_000
    /// How access units reach libavcodec.
    ///
    /// Whole access units are the default: the assembler knows an access unit is complete at the
    /// same moment it knows its last NAL unit is (next start code, idle gap, RTP marker), so the
    /// last slice waits no longer; and libavcodec conceals a damaged picture properly. Per-NAL
    /// decoding only hides the decode time of earlier slices of multi-slice pictures, and a
    /// truncated or lost slice leaves libavcodec's CHUNKS mode stuck in the picture until the
    /// next IDR ("frame num change" errors), so it is opt-in for clean links.
    public enum DecodeMode: String, Sendable {
        /// Whole access units (one packet each).
        case accessUnit = "au"
        /// H.264: each NAL unit as it completes (`AV_CODEC_FLAG2_CHUNKS`); H.265 falls back to
        /// whole access units (libavcodec's HEVC decoder needs them). Not with paced playback.
        case nal
    }
    public var decodeMode: DecodeMode = .accessUnit
    /// How UDP payloads are read (`--rtp`, `--raw`, or detect).
    public typealias Transport = DepacketizerSettings.Transport
    public var transport: Transport = .auto
    /// RTP jitter buffer: longest wait for a missing packet, µs (0 = no wait, the default).
    public var reorderWindowMicros = 0
    /// The RTP header extension with capture times (`--rtp-ext ID=URI`; nil: from the SDP).
    public var captureExtension: CaptureTimeExtension?
    /// RTP payload type and parameter sets from an SDP (`--sdp`).
    public var sdp: SessionDescription?
    /// After a start or a sender restart, wait this long for an IDR / IRAP / recovery point
    /// before decoding whatever comes (never wait forever), µs.
    public var joinTimeoutMicros = 2_000_000
    /// A join mid-stream (or after loss): wait for a clean picture (default), or show concealed
    /// ones at once, marked damaged (`--join show`: links with no way back for keyframe requests).
    public enum Join: String, Sendable { case wait, show }
    /// `--join wait|show`.
    public var join = Join.wait
    /// Slice threads for the decoder (1 = single thread).
    public var decoderThreads = 1
    /// With the default of 1 thread: use 2 slice threads once the pictures turn out to have
    /// several slices (slice threading is bit-exact and adds no delay; frame threading would).
    public var autoSliceThreads = true
    /// Cap on one access unit, bytes.
    public var maxAccessUnitBytes = 32 << 20
    /// Cap on picture size from an SPS, luma samples.
    public var maxPictureWidth = PictureSizeCap.default.width
    public var maxPictureHeight = PictureSizeCap.default.height
    /// Senders accepted (`--allow-from`); empty = everyone.
    public var allowFrom: [AddressPrefix] = []
    /// The MPEG-TS program or video PID to play (the source URL's `?program=`/`?pid=`).
    public var mpegtsSelection = MPEGTSSelection()
    /// How RTP comes from an RTSP server (`--rtsp-transport`).
    public var rtspTransport: RTSPTransport = .auto
    /// UDP receive buffer to ask the kernel for, bytes.
    public var udpReceiveBufferBytes = 8 << 20
    /// RTP: ask the sender for a keyframe (RTCP PLI) on loss and on a join (`--keyframe-requests`).
    public var keyframeRequests = true
    /// `--keyframe-url URL`: an HTTP GET asks the camera for an IDR wherever a PLI would be sent
    /// (``KeyframeURL``).
    public var keyframeURL: String?

    public init() {}

    /// What the depacketizers are told (``DepacketizerSettings``).
    public var depacketizer: DepacketizerSettings {
        var s = DepacketizerSettings()
        s.transport = transport
        s.codec = codec
        s.sdp = sdp
        s.reorderWindowMicros = reorderWindowMicros
        s.captureExtension = captureExtension
        s.idleFlushMicros = idleFlushMicros
        s.maxUnitBytes = maxAccessUnitBytes
        s.mpegtsSelection = mpegtsSelection
        s.keyframeRequests = keyframeRequests
        return s
    }

    /// What opening the source needs (``SourceOptions``).
    public var source: SourceOptions {
        var s = SourceOptions()
        s.udpReceiveBufferBytes = udpReceiveBufferBytes
        s.allowFrom = allowFrom
        s.untimed = untimed
        s.rtspTransport = rtspTransport
        s.rtpDeclared = transport == .rtp || sdp != nil
        return s
    }

    /// What the access-unit stage is told (``AssemblySettings``).
    public var assembly: AssemblySettings {
        var s = AssemblySettings()
        s.codec = codec
        s.sdp = sdp
        s.maxAccessUnitBytes = maxAccessUnitBytes
        s.maxPictureWidth = maxPictureWidth
        s.maxPictureHeight = maxPictureHeight
        return s
    }
}
