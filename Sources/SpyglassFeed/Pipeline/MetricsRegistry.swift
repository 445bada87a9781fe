import Synchronization
import SpyglassPipeline
import SpyglassIngest

/// One feed's counters, stage histograms and gauges, safe to read from any thread.
///
/// The pipeline's stages write to it; the summary line, the `s` overlay, `--summary` JSON and
/// (later) `/metrics` all read the same numbers from ``snapshot()``.
///
/// Counters never go backwards. A stage that keeps its own running totals publishes them under
/// a group name with ``publish(group:_:)``; when the stage is replaced (a codec switch, a decoder
/// swap) ``retire(group:)`` folds what it counted into the base, so the new stage counts on top.
/// Events (a cut, a reset, a frame shown) are added directly with ``add(_:_:)``.
public final class MetricsRegistry: Sendable {
    /// A copy of everything, taken at one instant.
    public struct Snapshot: Sendable {
        /// Counter totals.
        public var counters: [Metric: Int] = [:]
        /// Stage histograms, µs.
        public var stages: [Stage: Histogram] = [:]
        /// Free-form facts: codec, format, parameter-set changes.
        public var codec: String?
        public var format: String?
        /// The ingest format in use ("rtp", "annex-b"), once known.
        public var transport: String?
        /// How the sender's capture stamps relate to our clock, when that is worth saying.
        public var clockStatus: String?
        /// Where the newest picture's capture time came from (`sei`, `rtcp`, `klv`, `none`…).
        public var captureSource: String?
        /// The platform's position and heading from the newest KLV local set (MISB ST 0601).
        public var platform: String?
        /// When the newest picture was shown, monotonic µs (nil before the first).
        public var lastShownMicros: UInt64?
        public var parameterSetChanges: [String] = []
        /// Pictures shown, by the rule that ended their access unit (``AccessUnit/Completion`` raw values).
        public var completions: [String: Int] = [:]
        /// SRT's statistics of the link, for an SRT source.
        public var srt: SRTStatistics?
        /// Counter value (0 when never counted).
        public subscript(_ m: Metric) -> Int { counters[m] ?? 0 }
    }

    private struct State {
        var added: [Metric: Int] = [:]
        var retired: [Metric: Int] = [:]
        var live: [Group: [Metric: Int]] = [:]
        var stages: [Stage: Histogram] = [:]
        var codec: String?
        var format: String?
        var transport: String?
        var clockStatus: String?
        var captureSource: String?
        var platform: String?
        var lastShownMicros: UInt64?
        var changes: [String] = []
        var completions: [String: Int] = [:]
        var srt: SRTStatistics?
    }
    private let state = Mutex(State())

    public init() {}

    /// Adds `n` to a counter (an event happened `n` times).
    public func add(_ m: Metric, _ n: Int = 1) {
        guard n > 0 else { return }
        state.withLock { $0.added[m, default: 0] += n }
    }

    /// A stage that counts for itself and publishes its running totals.
    public enum Group: Hashable, Sendable {
        case source, depacketizer, assembly, gate, decoder, srt
    }

    /// Sets the running totals of a stage that counts for itself (each value only grows while
    /// the stage lives).
    public func publish(group: Group, _ counts: [Metric: Int]) {
        state.withLock { $0.live[group] = counts }
    }

    /// The stage publishing under `group` is being replaced: what it counted stays in the totals.
    public func retire(group: Group) {
        state.withLock { s in
            guard let last = s.live.removeValue(forKey: group) else { return }
            for (m, v) in last { s.retired[m, default: 0] += v }
        }
    }

    /// A picture was shown at `micros` (monotonic µs): the frame-age gauge counts from it.
    /// - Parameters:
    ///   - completion: the rule that ended its access unit (``AccessUnit/Completion`` raw value).
    public func noteShown(atMicros micros: UInt64, completion: String? = nil) {
        state.withLock { s in
            s.lastShownMicros = micros
            if let completion { s.completions[completion, default: 0] += 1 }
        }
    }

    /// Records a stage time, µs.
    public func observe(_ stage: Stage, micros: UInt64) {
        state.withLock { $0.stages[stage, default: Histogram()].record(micros) }
    }

    /// Sets the codec and stream format shown in the summary and overlay.
    public func setFormat(codec: String?, format: String?) {
        state.withLock { s in
            if let codec { s.codec = codec }
            if let format { s.format = format }
        }
    }

    /// Says how the sender's capture stamps relate to our clock (a relative mode, an offset found).
    public func setClockStatus(_ text: String) {
        state.withLock { $0.clockStatus = text }
    }

    /// Says where the capture times now come from (``CaptureSource``'s raw value), when it changes.
    public func setCaptureSource(_ source: String) {
        state.withLock { $0.captureSource = source }
    }

    /// Says where the platform is, from the newest KLV local set ("47.397700, 8.545600, 500 m, heading 90.0°").
    public func setPlatform(_ text: String) {
        state.withLock { $0.platform = text }
    }

    /// Sets the ingest format in use ("rtp", "annex-b").
    public func setTransport(_ framing: Framing) {
        state.withLock { $0.transport = framing.rawValue }
    }

    /// Sets SRT's statistics of the link (RTT and latency are read from here as gauges).
    public func setSRT(_ statistics: SRTStatistics) {
        state.withLock { $0.srt = statistics }
    }

    /// Adds a parameter-set change line (an SPS changed under the same id).
    public func noteParameterSetChange(_ line: String) {
        // Kept to the latest 100 (a sender flipping parameter sets would grow it for ever).
        state.withLock { s in
            s.changes.append(line)
            if s.changes.count > 100 { s.changes.removeFirst(s.changes.count - 100) }
        }
    }

    /// One counter's total now (cheaper than a whole snapshot).
    public func count(_ m: Metric) -> Int {
        state.withLock { s in
            (s.retired[m] ?? 0) + (s.added[m] ?? 0) + s.live.values.reduce(0) { $0 + ($1[m] ?? 0) }
        }
    }

    /// The codec in use ("H.264", "H.265"), once known (cheaper than a whole snapshot).
    public var codec: String? { state.withLock { $0.codec } }

    /// Everything, at one instant.
    public func snapshot() -> Snapshot {
        state.withLock { s in
            var out = Snapshot()
            var totals = s.retired
            for (m, v) in s.added { totals[m, default: 0] += v }
            for group in s.live.values { for (m, v) in group { totals[m, default: 0] += v } }
            out.counters = totals
            out.stages = s.stages
            out.codec = s.codec
            out.format = s.format
            out.transport = s.transport
            out.clockStatus = s.clockStatus
            out.captureSource = s.captureSource
            out.platform = s.platform
            out.lastShownMicros = s.lastShownMicros
            out.parameterSetChanges = s.changes
            out.completions = s.completions
            out.srt = s.srt
            return out
        }
    }
}
