/// Judges the sender's capture stamps against our clock, frame by frame.
///
/// A drone's clock is rarely synchronized with the ground station's. A stamp that says the
/// picture was captured after it arrived, or more than ``plausibleTransitMicros`` before, cannot
/// be on our clock: the first such frame names the offset once, and from then on glass-to-glass is
/// reported as unavailable, never as a number. `--clock-offset-ms` corrects a known offset;
/// relative mode measures from the fastest frame seen.
public struct CaptureClock: Sendable {
    /// How stamps are read.
    public enum Mode: Equatable, Sendable {
        /// Stamps are on our clock, after adding `offsetMicros` (`--clock-offset-ms`; 0 by default).
        case absolute(offsetMicros: Int64)
        /// Offset estimated from the minimum sender+network time (`--clock-offset relative`).
        case relative
    }

    /// The longest believable time from capture to arrival, µs (2 s: a satellite hop and an
    /// encoder's delay fit well inside it).
    public static let plausibleTransitMicros: Int64 = 2_000_000
    /// Tolerance for a capture "after" arrival: clocks synchronized by NTP differ by about a
    /// millisecond.
    public static let toleranceMicros: Int64 = 2_000

    public let mode: Mode
    /// How far the sender's clock runs ahead of ours, estimated from the first impossible frame
    /// (taking its transit as zero), µs; negative: behind. nil while the stamps are believable.
    public private(set) var estimatedOffsetMicros: Int64?
    private var minTransit: Int64?

    /// - Parameter mode: absolute (with a known offset) or relative.
    public init(mode: Mode = .absolute(offsetMicros: 0)) { self.mode = mode }

    /// Stamps at or above this are refused (2^62 µs since the epoch): below it every difference
    /// and offset taken here fits in 64 bits.
    public static let largestStampMicros: UInt64 = 1 << 62

    /// The capture time to use for a frame, and its source.
    /// - Parameters:
    ///   - captureWallMicros: the sender's stamp, µs since the epoch (0 = none).
    ///   - arrivalWallMicros: our wall-clock time of the frame's last byte, µs.
    ///   - origin: where the stamp came from (`sei`, `rtcp`, `klv`); the same rules apply to all.
    /// - Returns: the capture time on our wall clock (0 when unavailable), its source, and a line
    ///   to log when this frame showed the clocks disagree (once).
    public mutating func judge(captureWallMicros: UInt64, arrivalWallMicros: UInt64, origin: CaptureSource = .sei)
        -> (captureWallMicros: UInt64, source: CaptureSource, note: String?) {
        // A stamp past year 146,000 (2^62 µs) is no time at all: a broken or hostile sender.
        guard captureWallMicros > 0, captureWallMicros < Self.largestStampMicros,
              arrivalWallMicros < Self.largestStampMicros else { return (0, .none, nil) }
        let transit = Int64(bitPattern: arrivalWallMicros) - Int64(bitPattern: captureWallMicros)
        switch mode {
        case .relative:
            minTransit = min(minTransit ?? transit, transit)
            return (UInt64(max(0, Int64(bitPattern: captureWallMicros) + minTransit!)), origin.relative, nil)
        case .absolute(let offset):
            if estimatedOffsetMicros != nil { return (0, .clockOffset, nil) }
            // A sender `offset` ahead stamps `offset` late: its capture on our clock is earlier.
            let corrected = transit + offset
            guard corrected < -Self.toleranceMicros || corrected > Self.plausibleTransitMicros else {
                return (UInt64(max(0, Int64(bitPattern: captureWallMicros) - offset)), origin, nil)
            }
            estimatedOffsetMicros = offset - corrected
            let ms = Double(offset - corrected) / 1000
            let note = String(format: "the sender's clock is about %+.0f ms %@ ours (a capture stamp %@): glass-to-glass is not available; "
                              + "synchronize the clocks (chrony or PTP), or give --clock-offset-ms %.0f, or --clock-offset relative",
                              ms, ms > 0 ? "ahead of" : "behind",
                              corrected < 0 ? "after the picture arrived" : String(format: "%.1f s before its arrival", Double(corrected) / 1e6),
                              ms)
            return (0, .clockOffset, note)
        }
    }
}

/// Puts each frame's capture time on our clock (``CaptureClock``) before it is logged or shown.
/// Replayed frames keep the recording's own times.
public final class CaptureClockTap: FrameTap {
    private var clock: CaptureClock
    private let wallMinusMonotonicMicros: Int64
    private let metrics: MetricsRegistry
    private var lastSource: CaptureSource?

    /// - Parameters:
    ///   - mode: absolute with an offset, or relative.
    ///   - metrics: told the clock's state, for the summary and overlay.
    public init(mode: CaptureClock.Mode, metrics: MetricsRegistry) {
        clock = CaptureClock(mode: mode)
        wallMinusMonotonicMicros = Int64(bitPattern: MonotonicClock.wallMicros()) - Int64(bitPattern: MonotonicClock.nowMicros())
        self.metrics = metrics
        if mode == .relative { metrics.setClockStatus("relative (offset from the fastest frame)") }
    }

    public func observe(_ frame: DecodedFrame) {
        guard frame.replayEntry == nil, frame.timing.lastByteMicros > 0 else { return }
        let arrival = UInt64(max(0, Int64(bitPattern: frame.timing.lastByteMicros) + wallMinusMonotonicMicros))
        let v = clock.judge(captureWallMicros: frame.timing.captureWallMicros, arrivalWallMicros: arrival,
                            origin: frame.timing.captureSource)
        frame.timing.captureWallMicros = v.captureWallMicros
        frame.timing.captureSource = v.source
        let shown = v.captureWallMicros > 0 || v.source == .clockOffset ? v.source : .none
        if shown != lastSource {
            lastSource = shown
            metrics.setCaptureSource(shown.rawValue)
        }
        if let note = v.note {
            Log.info(note)
            metrics.setClockStatus(String(format: "sender clock offset about %+.0f ms: no glass-to-glass", Double(clock.estimatedOffsetMicros ?? 0) / 1000))
        }
    }

    public func finish() {}
}
