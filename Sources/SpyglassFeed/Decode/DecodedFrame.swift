import CFFmpeg
import SpyglassPipeline

/// A picture out of libavcodec: immutable, so any thread may read it.
///
/// Owns a reference to the `AVFrame` (freed on deinit). Planes are in the decoder's native
/// pixel format (`yuv420p`, `yuv420p10le`, `yuv422p`, …); conversion, if any, happens at display.
/// Nothing writes to the frame after libavcodec returned it (`avcodec_receive_frame`): readers
/// (libswscale, the MD5 hash, the time-code reader) only read its planes.
public final class DecodedPicture: Sendable {
    /// The frame; valid for the life of this object, never written to.
    /// (`nonisolated(unsafe)`: a C pointer is not `Sendable`; the picture behind it is read-only.)
    public nonisolated(unsafe) let frame: UnsafeMutablePointer<AVFrame>

    /// Takes ownership of `frame` (an `av_frame_alloc`ed frame holding a picture).
    init(frame: UnsafeMutablePointer<AVFrame>) {
        self.frame = frame
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }

    /// Width in luma samples.
    public var width: Int { Int(frame.pointee.width) }
    /// Height in luma samples.
    public var height: Int { Int(frame.pointee.height) }
    /// libavutil pixel format.
    public var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: frame.pointee.format) }
    /// Pixel format name, e.g. "yuv420p".
    public var pixelFormatName: String { av_get_pix_fmt_name(pixelFormat).map { String(cString: $0) } ?? "?" }
    /// True for full ("JPEG") range samples, from the frame's `color_range` (or a `yuvj` format).
    public var isFullRange: Bool {
        frame.pointee.color_range == AVCOL_RANGE_JPEG
            || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(pixelFormat)
    }
    /// Colour matrix signalled by the stream (`AVCOL_SPC_*`).
    public var colorSpace: AVColorSpace { frame.pointee.colorspace }
    /// Reads a ``TimeCode`` whose strip starts at row `y` of the luma plane (8-bit formats).
    public func readTimeCode(y: Int) -> UInt64? {
        guard y >= 0, let plane = frame.pointee.data.0, frame.pointee.linesize.0 > 0,
              av_get_pix_fmt_name(pixelFormat).map({ String(cString: $0).hasPrefix("yuv") && !String(cString: $0).contains("p1") }) ?? false
        else { return nil }
        let stride = Int(frame.pointee.linesize.0), w = width, h = height
        return TimeCode.read(x: 0, y: y, width: w) { x, yy in
            guard x >= 0, x < w, yy >= 0, yy < h else { return 0 }
            return Int(plane[yy * stride + x])
        }
    }

    /// Sample aspect ratio as (num, den); (1, 1) when unknown.
    public var sampleAspectRatio: (Int, Int) {
        let r = frame.pointee.sample_aspect_ratio
        return r.num > 0 && r.den > 0 ? (Int(r.num), Int(r.den)) : (1, 1)
    }
}

/// One decoded picture on its way from the decoder to the screen: the shared, immutable
/// ``DecodedPicture`` and this trip's own stamps and marks, as a value.
///
/// Each stage that stamps it (the capture clock, the replay timeline, the window) changes its own
/// copy and passes that on, so a picture handed to another thread shares nothing mutable.
public struct DecodedFrame: Sendable {
    /// The picture itself.
    public let picture: DecodedPicture
    /// Output order, from 0.
    public let index: Int
    /// Index of the access unit that produced it (from the packet's pts).
    public let accessUnitIndex: Int
    /// Stage stamps, monotonic µs.
    public var timing: FrameTiming
    /// True when the access unit was damaged or libavcodec flagged errors in the picture.
    public let damaged: Bool
    /// For a replayed recording: the entry it came from (its recorded arrival and capture times).
    public var replayEntry: RecordingIndex.Entry?
    /// Re-decoded by a repair, and not the newest picture: recorded (framemd5), not shown.
    public var isRepairReplay = false
    /// The newest picture of a repair: shown again, but not counted or logged as a new one.
    public var isRepairNewest = false
    /// The picture shrunk for its wall tile on the feed's thread (``TilePrescaler``); nil when not.
    package var tileCopy: TilePrescaler.Copy?

    init(picture: DecodedPicture, index: Int, accessUnitIndex: Int, timing: FrameTiming, damaged: Bool) {
        self.picture = picture
        self.index = index
        self.accessUnitIndex = accessUnitIndex
        self.timing = timing
        self.damaged = damaged
    }

    /// This frame with another picture (a scaled copy of its own), its stamps and marks kept and
    /// no ``tileCopy``.
    package func replacingPicture(with p: DecodedPicture) -> DecodedFrame {
        var f = DecodedFrame(picture: p, index: index, accessUnitIndex: accessUnitIndex, timing: timing, damaged: damaged)
        f.replayEntry = replayEntry
        f.isRepairReplay = isRepairReplay
        f.isRepairNewest = isRepairNewest
        return f
    }

    /// The libavcodec frame (``DecodedPicture/frame``): read only.
    public var frame: UnsafeMutablePointer<AVFrame> { picture.frame }
    /// Width in luma samples.
    public var width: Int { picture.width }
    /// Height in luma samples.
    public var height: Int { picture.height }
    /// libavutil pixel format.
    public var pixelFormat: AVPixelFormat { picture.pixelFormat }
    /// Pixel format name, e.g. "yuv420p".
    public var pixelFormatName: String { picture.pixelFormatName }
    /// See ``DecodedPicture/isFullRange``.
    public var isFullRange: Bool { picture.isFullRange }
    /// Colour matrix signalled by the stream (`AVCOL_SPC_*`).
    public var colorSpace: AVColorSpace { picture.colorSpace }
    /// Sample aspect ratio as (num, den); (1, 1) when unknown.
    public var sampleAspectRatio: (Int, Int) { picture.sampleAspectRatio }
    /// See ``DecodedPicture/readTimeCode(y:)``.
    public func readTimeCode(y: Int) -> UInt64? { picture.readTimeCode(y: y) }
}

/// Monotonic µs stamps of one frame's trip through the receiver (0 = not reached).
public struct FrameTiming: Sendable, Codable {
    /// Capture instant, wall clock µs since the epoch (0 = none), from ``captureSource``.
    public var captureWallMicros: UInt64 = 0
    /// First byte of the access unit arrived.
    public var firstByteMicros: UInt64 = 0
    /// Last byte arrived.
    public var lastByteMicros: UInt64 = 0
    /// The assembler knew the access unit was complete.
    public var completeMicros: UInt64 = 0
    /// Handed to libavcodec.
    public var decodeStartMicros: UInt64 = 0
    /// libavcodec returned the picture.
    public var decodeEndMicros: UInt64 = 0
    /// The decode call that took the access unit returned without its picture: libavcodec held
    /// the picture for output order (B-frames, ITU-T H.264 §C.4.5.3) from here to
    /// ``decodeEndMicros``. 0 when the picture came out of that call.
    public var heldForOrderFromMicros: UInt64 = 0
    /// The display started uploading the picture (0 for headless).
    public var renderStartMicros: UInt64 = 0
    /// Presented: `SDL_RenderPresent` returned, or the headless sink took it.
    public var presentedMicros: UInt64 = 0
    /// Optical capture: the wall-clock µs read from a ``TimeCode`` in the picture itself
    /// (a camera filming `--clock`); 0 when none was read.
    public var opticalWallMicros: UInt64 = 0
    /// The rule that completed the access unit (nil when unknown).
    public var completion: AccessUnit.Completion?
    /// Where ``captureWallMicros`` came from: the access unit's origin (`sei`, `rtcp`, `klv`),
    /// then as ``CaptureClock`` judged it.
    public var captureSource: CaptureSource = .sei

    public init() {}

    /// libavcodec's work on the picture, µs: decode start to the end of the call that took its
    /// access unit (or to the picture, when it came out in that call). nil before decoding.
    public var decodeMicros: UInt64? {
        let end = heldForOrderFromMicros > 0 ? heldForOrderFromMicros : decodeEndMicros
        guard decodeStartMicros > 0, end >= decodeStartMicros else { return nil }
        return end - decodeStartMicros
    }

    /// How long the decoded picture waited inside libavcodec for output order, µs (0: none).
    public var reorderMicros: UInt64 {
        heldForOrderFromMicros > 0 && decodeEndMicros >= heldForOrderFromMicros ? decodeEndMicros - heldForOrderFromMicros : 0
    }

    /// Moves a replayed frame's stamps onto the recording's timeline, so a replay's latency log
    /// reproduces the live one: arrival and capture come from the recording, and the receiver's
    /// own stages (assembly, decode, queue, render) are measured again and added after the
    /// recorded last byte. The recording's wall-minus-monotonic offset comes from its index
    /// (`wallMicros` is the wall time of the last byte).
    public mutating func replayed(as e: RecordingIndex.Entry, currentWallMinusMonotonicMicros: Int64) {
        guard lastByteMicros > 0 else { return }
        let shift = Int64(bitPattern: e.lastByteMicros) - Int64(bitPattern: lastByteMicros)
        func moved(_ t: UInt64) -> UInt64 { t == 0 ? 0 : UInt64(max(0, Int64(bitPattern: t) + shift)) }
        completeMicros = moved(completeMicros)
        decodeStartMicros = moved(decodeStartMicros)
        decodeEndMicros = moved(decodeEndMicros)
        heldForOrderFromMicros = moved(heldForOrderFromMicros)
        renderStartMicros = moved(renderStartMicros)
        presentedMicros = moved(presentedMicros)
        firstByteMicros = e.firstByteMicros
        lastByteMicros = e.lastByteMicros
        if e.captureWallMicros > 0 && e.wallMicros > 0 {
            // Capture on the recording's monotonic clock, expressed so that the latency recorder's
            // wall → monotonic conversion (with this machine's offset) lands on it.
            // Clamped and wrapping: an index from a damaged or hostile file must not trap.
            let recordedOffset = Int64(clamping: e.wallMicros) &- Int64(clamping: e.lastByteMicros)
            let captureMono = Int64(clamping: e.captureWallMicros) &- recordedOffset
            captureWallMicros = UInt64(max(0, captureMono &+ currentWallMinusMonotonicMicros))
        } else {
            captureWallMicros = 0
        }
    }
}
