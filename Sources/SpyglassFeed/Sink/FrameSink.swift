import SpyglassPipeline
/// Where decoded pictures go, one stage after another, on the feed's own thread.
///
/// The chain a `play` feed builds (`PlaySession`):
/// ```
/// [ReplayTimeline] → FrameTee (framemd5, optical time code) → DamageFilter → HeadlessSink | WindowSink
/// ```
/// framemd5 sees every decoded picture (it must equal `ffmpeg -f framemd5`); the damage filter
/// holds back damaged ones with `--hide-damaged`; the last stage presents, stamps and logs.
public protocol FrameSink: AnyObject {
    /// Takes one decoded picture.
    func consume(_ frame: DecodedFrame)
    /// The feed ended: nothing more will come.
    func finish()
    /// A repair re-decodes access unit `index` and the ones after it: what was recorded for them
    /// is taken back; their pictures come again (all but the newest marked ``DecodedFrame/isRepairReplay``).
    func rewind(toAccessUnit index: Int)
}

extension FrameSink {
    public func finish() {}
    public func rewind(toAccessUnit index: Int) {}
}

/// Something that looks at every picture on its way (writes a hash, reads a time code).
public protocol FrameTap: AnyObject {
    /// Looks at (and may stamp) one picture.
    func observe(_ frame: inout DecodedFrame)
    /// The feed ended.
    func finish()
    /// See ``FrameSink/rewind(toAccessUnit:)``.
    func rewind(toAccessUnit index: Int)
}

extension FrameTap {
    public func rewind(toAccessUnit index: Int) {}
}

/// Passes each picture to every tap, then on.
public final class FrameTee: FrameSink {
    private let taps: [any FrameTap]
    private let next: any FrameSink

    /// - Parameters:
    ///   - taps: called in order for each picture.
    ///   - next: the stage after.
    public init(taps: [any FrameTap], next: any FrameSink) {
        self.taps = taps
        self.next = next
    }

    public func consume(_ frame: DecodedFrame) {
        var frame = frame
        for t in taps { t.observe(&frame) }
        next.consume(frame)
    }

    public func finish() {
        for t in taps { t.finish() }
        next.finish()
    }

    public func rewind(toAccessUnit index: Int) {
        for t in taps { t.rewind(toAccessUnit: index) }
        next.rewind(toAccessUnit: index)
    }
}

/// Holds back damaged pictures when asked (`--hide-damaged`): the last clean one stays on screen,
/// and each hidden picture is counted as dropped and logged as such.
public final class DamageFilter: FrameSink {
    private let show: Bool
    private let next: any FrameSink
    private let metrics: MetricsRegistry
    private let latency: LatencyRecorder?

    /// - Parameters:
    ///   - showDamaged: pass damaged pictures on (the default), or hold them back.
    ///   - metrics: counts hidden pictures as ``Metric/framesDropped``.
    ///   - latency: logs hidden pictures as dropped.
    ///   - next: the stage after.
    public init(showDamaged: Bool, metrics: MetricsRegistry, latency: LatencyRecorder?, next: any FrameSink) {
        show = showDamaged
        self.metrics = metrics
        self.latency = latency
        self.next = next
    }

    public func consume(_ frame: DecodedFrame) {
        // A repair's re-decoded pictures before the newest are recorded (framemd5), never shown.
        if frame.isRepairReplay { return }
        if frame.damaged && !show {
            PresentationStamps.recordDropped(frame, metrics: metrics, latency: latency)
            return
        }
        next.consume(frame)
    }

    public func finish() { next.finish() }
    public func rewind(toAccessUnit index: Int) { next.rewind(toAccessUnit: index) }
}

/// The end of a headless feed: a picture counts as shown when it gets here.
public final class HeadlessSink: FrameSink {
    private let metrics: MetricsRegistry
    private let latency: LatencyRecorder?

    /// - Parameters:
    ///   - metrics: counts ``Metric/framesShown`` and the receiver-added and glass-to-glass times.
    ///   - latency: per-frame log.
    public init(metrics: MetricsRegistry, latency: LatencyRecorder?) {
        self.metrics = metrics
        self.latency = latency
    }

    public func consume(_ frame: DecodedFrame) {
        var frame = frame
        frame.timing.presentedMicros = MonotonicClock.nowMicros()
        PresentationStamps.record(frame, metrics: metrics, latency: latency)
    }
}

/// What every presenting sink does once a picture is on screen (or taken, headless), or is
/// dropped instead. Every decoded picture ends as exactly one of: shown, dropped, or never meant
/// to be shown (a repair's re-decoded pictures, a replay's pictures before its seek target).
public enum PresentationStamps {
    /// Counts and logs a picture that will not be shown (replaced in its slot before the window
    /// took it, held back as damaged, not drawable, or left over at the end). The newest picture
    /// of a repair is its access unit's second picture: its first was counted already, so it is
    /// neither shown nor dropped a second time ("decoded 3390, displayed 3117 + dropped 275").
    public static func recordDropped(_ frame: DecodedFrame, metrics: MetricsRegistry, latency: LatencyRecorder?) {
        if frame.isRepairNewest { return }
        metrics.add(.framesDropped)
        latency?.record(frame, dropped: true)
    }

    /// Counts the picture as shown, adds its stage times to the histograms, and logs it.
    /// - Parameters:
    ///   - frame: with `presentedMicros` stamped (monotonic µs).
    ///   - metrics: the feed's registry.
    ///   - latency: the per-frame log, if any.
    public static func record(_ frame: DecodedFrame, metrics: MetricsRegistry, latency: LatencyRecorder?) {
        if frame.isRepairNewest { return }   // its access unit was counted and logged when first shown
        metrics.add(.framesShown)
        let t = frame.timing
        metrics.noteShown(atMicros: t.presentedMicros, completion: t.completion?.rawValue)
        // A replayed picture was captured when it was recorded: its age now is no glass-to-glass.
        if t.captureWallMicros > 0 && t.captureSource != .clockOffset && frame.replayEntry == nil {
            let presentedWall = Int64(bitPattern: t.presentedMicros) + MonotonicClock.wallMinusMonotonicMicros
            // Clamped, not reinterpreted: a stamp with its top bit set (a hostile sender) is no time.
            let capture = Int64(clamping: t.captureWallMicros)
            if presentedWall > capture {
                metrics.observe(.glassToGlass, micros: UInt64(presentedWall - capture))
            }
        }
        if t.lastByteMicros > 0 && t.presentedMicros >= t.lastByteMicros {
            metrics.observe(.receiverAdded, micros: t.presentedMicros - t.lastByteMicros)
        }
        if t.decodeEndMicros > 0 && t.renderStartMicros >= t.decodeEndMicros {   // (a window only)
            metrics.observe(.queue, micros: t.renderStartMicros - t.decodeEndMicros)
        }
        if t.renderStartMicros > 0 && t.presentedMicros >= t.renderStartMicros {
            metrics.observe(.render, micros: t.presentedMicros - t.renderStartMicros)
        }
        latency?.record(frame, dropped: false)
    }
}
