import SpyglassPipeline
import SpyglassIngest
/// Judges the sender's capture stamps against our clock, frame by frame.
///
/// A drone's clock is rarely synchronized with the ground station's. A stamp that says the
/// picture was captured after it arrived, or more than ``plausibleTransitMicros`` before, cannot
/// be on our clock, and that frame gives no figure. But one such frame is no proof of an offset:
/// a backlog on our side (a receiver that fell behind, datagrams waiting in the socket buffer)
/// makes frames arrive late by our clock too, and it drains again. So the offset is judged on
/// the fastest frames, as NTP judges a clock on its least-delayed samples (RFC 5905 §10, the
/// clock filter): the clocks are called off only when ``evidenceFrames`` frames in a row are
/// impossible on the same side (the fastest of them still impossible) and, when late, steady
/// (within ``steadyMicros`` of each other: a backlog that drains hands over frames ever less
/// late, an offset keeps them all equally late), and called right again as soon as
/// ``evidenceFrames`` frames in a row are believable. Each change is one log line.
/// While the clocks are off, glass-to-glass is reported as unavailable, never as a number.
/// `--clock-offset-ms` corrects a known offset; relative mode measures from the fastest frame seen.
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
    /// Frames in a row that must agree before the clocks are called off, or right again (15:
    /// half a second at 30 fps; a 1 s run still names an offset).
    public static let evidenceFrames = 15
    /// How far apart the transits of a run of late frames may lie and still show an offset, µs
    /// (250 ms: a network's jitter fits; a backlog read out at catch-up speed does not).
    public static let steadyMicros: Int64 = 250_000

    public let mode: Mode
    /// How far the sender's clock runs ahead of ours, estimated from the fastest of the frames
    /// that showed it (taking its transit as zero), µs; negative: behind. nil while the clocks
    /// are believed to agree.
    public private(set) var estimatedOffsetMicros: Int64?
    private var minTransit: Int64?
    /// The run of frames that disagree with the present verdict: which side of the believable
    /// range they fall on (-1 early, +1 late, 0 believable), how many, and the fastest and
    /// slowest transit, µs.
    private var run = (side: 0, frames: 0, fastestMicros: Int64.max, slowestMicros: Int64.min)

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
    ///   to log when this frame settled that the clocks disagree, or agree again.
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
            // A sender `offset` ahead stamps `offset` late: its capture on our clock is earlier.
            let corrected = transit + offset
            let side = corrected < -Self.toleranceMicros ? -1 : corrected > Self.plausibleTransitMicros ? 1 : 0
            let note = weigh(side: side, corrected: corrected, offset: offset)
            guard estimatedOffsetMicros == nil else { return (0, .clockOffset, note) }
            guard side == 0 else { return (0, .none, note) }
            return (UInt64(max(0, Int64(bitPattern: captureWallMicros) - offset)), origin, note)
        }
    }

    /// Adds one frame to the evidence; changes the verdict when ``evidenceFrames`` in a row
    /// disagree with it.
    /// - Returns: the line to log when the verdict changed.
    private mutating func weigh(side: Int, corrected: Int64, offset: Int64) -> String? {
        let off = estimatedOffsetMicros != nil
        // Evidence against the verdict: impossible frames while the clocks agree, believable
        // ones while they are off. Anything else ends the run.
        guard off ? side == 0 : side != 0 else { run = (0, 0, .max, .min); return nil }
        let continues = run.side == side
            && (side != 1 || max(run.slowestMicros, corrected) - min(run.fastestMicros, corrected) <= Self.steadyMicros)
        run = continues ? (side, run.frames + 1, min(run.fastestMicros, corrected), max(run.slowestMicros, corrected))
                        : (side, 1, corrected, corrected)
        guard run.frames >= Self.evidenceFrames else { return nil }
        let fastest = run.fastestMicros
        run = (0, 0, .max, .min)
        if off {
            let was = estimatedOffsetMicros!
            estimatedOffsetMicros = nil
            return String(format: "the capture stamps agree with our clock again (the last %d frames took %.0f ms at the fastest; "
                          + "the offset of about %+.0f ms is gone): glass-to-glass is back", Self.evidenceFrames, Double(fastest) / 1000, Double(was) / 1000)
        }
        estimatedOffsetMicros = offset - fastest
        return Self.offsetNote(ms: Double(offset - fastest) / 1000, fastestMicros: fastest)
    }

    /// The line that names an offset, with what would fix it.
    private static func offsetNote(ms: Double, fastestMicros: Int64) -> String {
        String(format: "the sender's clock is about %.0f ms %@ ours (%d frames in a row, the fastest captured %@): glass-to-glass is not available "
               + "until the stamps agree again; synchronize the clocks (chrony or PTP), or give --clock-offset-ms %.0f, or --clock-offset relative",
               abs(ms), ms > 0 ? "ahead of" : "behind", evidenceFrames,
               fastestMicros < 0 ? "after it arrived" : String(format: "%.1f s before its arrival", Double(fastestMicros) / 1e6), ms)
    }
}

/// Puts each frame's capture time on our clock (``CaptureClock``) before it is logged or shown.
/// Replayed frames keep the recording's own times.
///
/// A frame's arrival (monotonic) becomes a wall time through the wall clock as it is at that
/// frame, not as it was when the feed began: when the system's wall clock is stepped (chrony's
/// `makestep`, a VM's clock put right after a pause), the senders' stamps step with it. With the
/// start's mapping, a soak saw every feed's stamps 0.55 s "ahead of ours" after such a step,
/// and glass-to-glass was gone for the rest of the hour.
public final class CaptureClockTap: FrameTap {
    private var clock: CaptureClock
    private let wallMinusMonotonic: () -> Int64
    private let metrics: MetricsRegistry
    private var lastSource: CaptureSource?

    /// - Parameters:
    ///   - mode: absolute with an offset, or relative.
    ///   - metrics: told the clock's state, for the summary and overlay.
    ///   - wallMinusMonotonic: the wall clock minus the monotonic clock now, µs (tests give a
    ///     clock that steps).
    public init(mode: CaptureClock.Mode, metrics: MetricsRegistry,
                wallMinusMonotonic: @escaping () -> Int64 = { MonotonicClock.wallMinusMonotonicMicros }) {
        clock = CaptureClock(mode: mode)
        self.wallMinusMonotonic = wallMinusMonotonic
        self.metrics = metrics
        relativeUnsaid = mode == .relative
    }

    /// Relative mode is said in the summary once a stamp came (a stream without any says nothing).
    private var relativeUnsaid: Bool

    public func observe(_ frame: inout DecodedFrame) {
        guard frame.replayEntry == nil, frame.timing.lastByteMicros > 0 else { return }
        if relativeUnsaid && frame.timing.captureWallMicros > 0 {
            relativeUnsaid = false
            metrics.setClockStatus("relative (offset from the fastest frame)")
        }
        let arrival = UInt64(max(0, Int64(bitPattern: frame.timing.lastByteMicros) + wallMinusMonotonic()))
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
            metrics.setClockStatus(clock.estimatedOffsetMicros.map { String(format: "sender clock offset about %+.0f ms: no glass-to-glass", Double($0) / 1000) }
                                   ?? "agrees with ours again after an offset")
        }
    }

    public func finish() {}
}
