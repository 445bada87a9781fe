import SpyglassIngest
/// Writes each picture's size and MD5 as `ffmpeg -f framemd5` does (``FrameMD5Writer``).
public final class FrameMD5Tap: FrameTap {
    private let writer: FrameMD5Writer
    private let onFailure: @Sendable (String) -> Void
    /// - Parameters:
    ///   - writer: an opened framemd5 file; closed when the feed ends.
    ///   - onFailure: told (once, at the end) when a write failed, with a one-line message.
    public init(writer: FrameMD5Writer, onFailure: @escaping @Sendable (String) -> Void) {
        self.writer = writer
        self.onFailure = onFailure
    }
    public func observe(_ frame: inout DecodedFrame) { writer.write(frame) }
    public func rewind(toAccessUnit index: Int) {
        if !writer.rewind(toAccessUnit: index) && !warned {
            warned = true
            Log.info("\(writer.path): cannot take back lines (not a regular file): after a repair it keeps the pictures as first decoded")
        }
    }
    private var warned = false
    public func finish() {
        writer.close()
        if writer.writeFailed { onFailure("\(writer.path): write failed (disk full?)") }
    }
}

/// `--clock`: reads the time code a camera filmed from our own clock strip, at the bottom of the
/// picture, into `opticalWallMicros` (true camera-to-screen latency on one clock).
public final class OpticalTimeCodeTap: FrameTap {
    public init() {}
    public func observe(_ frame: inout DecodedFrame) {
        let y = frame.height - TimeCode.stripHeight(width: frame.width)
        frame.timing.opticalWallMicros = frame.readTimeCode(y: y) ?? 0
    }
    public func finish() {}
}

/// Replay: hides the pictures decoded only as references before a seek target, and gives each
/// shown picture its recorded arrival and capture times (``RecordingSource``).
public final class ReplayTimeline: FrameSink {
    private let recording: RecordingSource
    private let metrics: MetricsRegistry
    private let next: any FrameSink

    /// - Parameters:
    ///   - recording: the source being replayed.
    ///   - metrics: counts the hidden pictures (``Metric/framesToSeekTarget``).
    ///   - next: the stage after.
    public init(recording: RecordingSource, metrics: MetricsRegistry, next: any FrameSink) {
        self.recording = recording
        self.metrics = metrics
        self.next = next
    }

    public func consume(_ frame: DecodedFrame) {
        var frame = frame
        if let (entry, hidden) = recording.picture(fromAccessUnit: frame.accessUnitIndex) {
            if hidden { metrics.add(.framesToSeekTarget); return }
            frame.replayEntry = entry
        }
        next.consume(frame)
    }

    public func finish() { next.finish() }
    public func rewind(toAccessUnit index: Int) { next.rewind(toAccessUnit: index) }
}
