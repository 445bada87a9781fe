import SpyglassPipeline
/// What one feed did over a recent window (about the last second): the live figures of the
/// headless status line and the overlay.
///
/// Built from two ``MetricsRegistry/Snapshot``s, as Prometheus's `rate()` is built from two
/// scrapes. The registry's counters never go backwards, so each difference is exact; the stage
/// figures are the histogram of the window alone (``Histogram/subtracting(_:)``), not of the run.
public struct FeedRates: Sendable {
    /// Length of the window, seconds.
    public var seconds: Double
    /// Access units assembled, pictures decoded and pictures shown, per second.
    public var accessUnitsPerSecond: Double
    public var decodedPerSecond: Double
    public var shownPerSecond: Double
    /// Bytes received, as bits per second.
    public var bitsPerSecond: Double
    /// Packets lost (RTP sequence gaps) and TS continuity errors in the window.
    public var lost: Int
    /// Damaged access units in the window.
    public var damaged: Int
    /// Each stage's samples in the window, µs.
    public var stages: [Stage: Histogram]
    /// Pictures shown in the window, by the rule that ended their access unit.
    public var completions: [String: Int]

    /// The rates between `older` and `newer`, taken `seconds` apart (> 0).
    public init(from older: MetricsRegistry.Snapshot, to newer: MetricsRegistry.Snapshot, seconds: Double) {
        let s = max(seconds, 1e-3)
        func rate(_ m: Metric) -> Double { Double(max(0, newer[m] - older[m])) / s }
        self.seconds = s
        accessUnitsPerSecond = rate(.accessUnits)
        decodedPerSecond = rate(.framesDecoded)
        shownPerSecond = rate(.framesShown)
        bitsPerSecond = rate(.bytes) * 8
        lost = max(0, newer[.packetsLost] - older[.packetsLost]) + max(0, newer[.tsContinuityErrors] - older[.tsContinuityErrors])
        damaged = max(0, newer[.damagedAccessUnits] - older[.damagedAccessUnits])
        var stages: [Stage: Histogram] = [:]
        for (stage, h) in newer.stages { stages[stage] = h.subtracting(older.stages[stage] ?? Histogram()) }
        self.stages = stages
        var completions: [String: Int] = [:]
        for (rule, n) in newer.completions where n > (older.completions[rule] ?? 0) { completions[rule] = n - (older.completions[rule] ?? 0) }
        self.completions = completions
    }

    /// The window's `q` quantile (0...1) of a stage, ms; nil when the stage had no sample.
    public func millis(_ stage: Stage, quantile q: Double) -> Double? {
        stages[stage]?.quantileMicros(q).map { $0 / 1000 }
    }
}
