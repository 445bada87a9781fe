import CFFmpeg
import SpyglassBitstream
import SpyglassFeed
import SpyglassDisplay

/// libavcodec's libx264/libx265 encoders set for live streaming: zero-latency tuning (no
/// lookahead, no B-frames), parameter sets repeated before every keyframe, Annex B output.
public final class VideoEncoder {
    /// What to encode.
    public struct Settings: Sendable {
        /// libx264 or libx265.
        public var codec: VideoCodec = .h264
        /// Picture width, pixels (even).
        public var width = 1280
        /// Picture height, pixels (even).
        public var height = 720
        /// Frames per second (integer rates; the timebase is 1/fps).
        public var fps = 30
        /// Target bitrate, bits per second.
        public var bitrate = 4_000_000
        /// Slices per picture (1 = one slice).
        public var slices = 1
        /// Periodic intra refresh instead of IDR pictures (H.264: recovery point SEI).
        public var intraRefresh = false
        /// Keyframe interval in frames (default 2 s).
        public var keyint: Int? = nil
        /// x264/x265 preset (default `ultrafast`). The sender's encode time is part of every
        /// glass-to-glass figure, so it is kept near what a camera's hardware encoder takes:
        /// measured per 640x360 frame here, ultrafast 1.1 ms, superfast 2.1 ms, veryfast 3.0 ms
        /// (720p: 3.6, 6.7, 11.9 ms). Slower presets also fall behind 30 fps on two cores.
        public var preset = "ultrafast"
        /// 720p30 H.264 at 4 Mbit/s, one slice, IDR every 2 s.
        public init() {}
    }

    /// Errors opening or running the encoder.
    public enum EncoderError: Error, CustomStringConvertible {
        case unavailable(String)
        case failed(String)
        public var description: String {
            switch self { case .unavailable(let s), .failed(let s): return s }
        }
    }

    /// What the encoder was opened with.
    public let settings: Settings
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    /// The frame to draw into before ``encode(pts:)``: yuv420p, `settings.width`x`settings.height`.
    public let frame: UnsafeMutablePointer<AVFrame>

    /// Opens libx264 or libx265.
    /// - Throws: ``EncoderError/unavailable(_:)`` when FFmpeg lacks the encoder.
    public init(settings: Settings) throws {
        self.settings = settings
        let name = settings.codec == .h264 ? "libx264" : "libx265"
        guard let codec = avcodec_find_encoder_by_name(name) else { throw EncoderError.unavailable("FFmpeg has no \(name) encoder") }
        guard let ctx = avcodec_alloc_context3(codec), let pkt = av_packet_alloc(), let f = av_frame_alloc() else {
            throw EncoderError.failed("out of memory")
        }
        context = ctx
        packet = pkt
        frame = f
        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(settings.fps))
        ctx.pointee.framerate = AVRational(num: Int32(settings.fps), den: 1)
        ctx.pointee.gop_size = Int32(settings.keyint ?? settings.fps * 2)
        ctx.pointee.max_b_frames = 0
        ctx.pointee.bit_rate = Int64(settings.bitrate)
        ctx.pointee.rc_max_rate = Int64(settings.bitrate)
        ctx.pointee.rc_buffer_size = Int32(clamping: settings.bitrate / 2)
        ctx.pointee.thread_count = 1
        av_opt_set(ctx.pointee.priv_data, "preset", settings.preset, 0)
        av_opt_set(ctx.pointee.priv_data, "tune", "zerolatency", 0)
        // A picture asked to be a keyframe (``forceKeyframe()``) is an IDR, not just an I picture.
        av_opt_set(ctx.pointee.priv_data, "forced-idr", "1", 0)
        if settings.codec == .h264 {
            var params = "slices=\(max(1, settings.slices)):repeat-headers=1"
            if settings.intraRefresh { params += ":intra-refresh=1" }
            av_opt_set(ctx.pointee.priv_data, "x264-params", params, 0)
        } else {
            var params = "log-level=error:repeat-headers=1:pools=none:frame-threads=1:slices=\(max(1, settings.slices))"
            if settings.intraRefresh { params += ":intra-refresh=1" }
            av_opt_set(ctx.pointee.priv_data, "x265-params", params, 0)
        }
        let rc = avcodec_open2(ctx, codec, nil)
        guard rc >= 0 else { throw EncoderError.failed("cannot open \(name): \(VideoDecoder.errorText(rc))") }
        f.pointee.width = Int32(settings.width)
        f.pointee.height = Int32(settings.height)
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        guard av_frame_get_buffer(f, 32) >= 0 else { throw EncoderError.failed("cannot allocate a frame") }
    }

    deinit {
        avcodec_free_context(&context)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// Makes ``frame`` writable (the encoder may still hold a reference to its buffers).
    public func prepareFrame() {
        av_frame_make_writable(frame)
    }

    /// Makes the next picture an IDR (a receiver asked for a keyframe).
    public func forceKeyframe() { keyframeForced = true }
    private var keyframeForced = false

    /// Encodes ``frame`` with presentation time `pts` (frames).
    /// - Returns: the Annex B packets that came out (zero-latency tuning: this frame's).
    public func encode(pts: Int64) throws -> [[UInt8]] {
        guard let ctx = context else { return [] }
        frame.pointee.pts = pts
        frame.pointee.pict_type = keyframeForced ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        keyframeForced = false
        let rc = avcodec_send_frame(ctx, frame)
        guard rc >= 0 else { throw EncoderError.failed("encode: \(VideoDecoder.errorText(rc))") }
        var out: [[UInt8]] = []
        while avcodec_receive_packet(ctx, packet) >= 0 {
            out.append(Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))))
            av_packet_unref(packet)
        }
        return out
    }
}
