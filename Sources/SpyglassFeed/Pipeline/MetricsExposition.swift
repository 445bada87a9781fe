import SpyglassPipeline
/// One feed as the metrics endpoint shows it.
public struct FeedMetrics: Sendable {
    /// The `feed` label: the feed's number and source ("1 udp://:5600").
    public var feed: String
    public var state: PipelineState
    public var snapshot: MetricsRegistry.Snapshot
    public init(feed: String, state: PipelineState, snapshot: MetricsRegistry.Snapshot) {
        self.feed = feed
        self.state = state
        self.snapshot = snapshot
    }
}

/// The Prometheus text exposition format (version 0.0.4) of every feed's registry.
///
/// Conventions as Prometheus asks: base units (seconds, bytes), counters end in `_total`, no
/// rates (`rate()` makes them), one `feed` label. Families:
/// - `spyglass_<counter>_total{feed}` for every ``Metric`` (frames decoded, shown, dropped; bytes;
///   packets lost and reordered; damaged access units; repairs; resets; decode errors …);
/// - `spyglass_stage_seconds{feed,stage}` histograms of each ``Stage`` (glass-to-glass included);
/// - `spyglass_frame_age_seconds{feed}`: time since the newest picture was shown;
/// - `spyglass_feed_state{feed,state}`: 1 for the feed's state, 0 for the others;
/// - `spyglass_srt_rtt_seconds{feed}`, `spyglass_srt_latency_seconds{feed}`: SRT's round-trip
///   time and agreed latency, for SRT feeds (its loss, retransmissions and drops are counters).
public enum MetricsExposition {
    /// Histogram bucket bounds, seconds (Prometheus `le`).
    public static let buckets: [Double] = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.033, 0.05, 0.1, 0.2, 0.5, 1, 2, 5]
    /// The counters of one family with a `reason` label.
    static let keyframeReasons: [Metric: String] = [.keyframeRequestsLoss: "loss", .keyframeRequestsCut: "cut",
                                                    .keyframeRequestsJoin: "join"]
    static let states = ["waiting_for_data", "waiting_for_picture", "live", "stalled", "connecting", "reconnecting", "ended", "failed"]

    /// The exposition text for `feeds` at monotonic time `nowMicros`.
    /// - Parameter stallMicros: a live feed with no picture for this long reads `stalled`.
    public static func text(_ feeds: [FeedMetrics], nowMicros: UInt64, stallMicros: UInt64 = 500_000) -> String {
        var out = ""
        for m in Metric.allCases where !keyframeReasons.keys.contains(m) {
            let name = "spyglass_\(m.rawValue)_total"
            out += "# HELP \(name) \(help(m))\n# TYPE \(name) counter\n"
            for f in feeds { out += "\(name){feed=\"\(escape(f.feed))\"} \(f.snapshot[m])\n" }
        }
        out += "# HELP spyglass_keyframe_requests_total Keyframe requests (RTCP PLI, RFC 4585 §6.3.1) sent, by reason.\n"
            + "# TYPE spyglass_keyframe_requests_total counter\n"
        for f in feeds {
            for (m, reason) in keyframeReasons.sorted(by: { $0.value < $1.value }) {
                out += "spyglass_keyframe_requests_total{feed=\"\(escape(f.feed))\",reason=\"\(reason)\"} \(f.snapshot[m])\n"
            }
        }
        out += "# HELP spyglass_stage_seconds Time each frame spent in a stage of the receiver.\n# TYPE spyglass_stage_seconds histogram\n"
        for f in feeds {
            for stage in Stage.allCases {
                let h = f.snapshot.stages[stage] ?? Histogram()
                let labels = "feed=\"\(escape(f.feed))\",stage=\"\(stage.rawValue)\""
                for b in buckets { out += "spyglass_stage_seconds_bucket{\(labels),le=\"\(b)\"} \(h.countAtOrBelow(micros: b * 1e6))\n" }
                out += "spyglass_stage_seconds_bucket{\(labels),le=\"+Inf\"} \(h.count)\n"
                out += "spyglass_stage_seconds_sum{\(labels)} \(Double(h.sumMicros) / 1e6)\n"
                out += "spyglass_stage_seconds_count{\(labels)} \(h.count)\n"
            }
        }
        out += "# HELP spyglass_frame_age_seconds Time since the newest picture was shown (NaN before the first).\n# TYPE spyglass_frame_age_seconds gauge\n"
        for f in feeds {
            let age = f.snapshot.lastShownMicros.map { Double(nowMicros - min(nowMicros, $0)) / 1e6 }
            out += "spyglass_frame_age_seconds{feed=\"\(escape(f.feed))\"} \(age.map { String($0) } ?? "NaN")\n"
        }
        out += srtGauges(feeds)
        out += "# HELP spyglass_feed_state 1 for the state the feed is in.\n# TYPE spyglass_feed_state gauge\n"
        for f in feeds {
            let current = stateName(f, nowMicros: nowMicros, stallMicros: stallMicros)
            for s in states { out += "spyglass_feed_state{feed=\"\(escape(f.feed))\",state=\"\(s)\"} \(s == current ? 1 : 0)\n" }
        }
        return out
    }

    /// The SRT gauges, for the feeds that have SRT statistics (none: no lines at all).
    static func srtGauges(_ feeds: [FeedMetrics]) -> String {
        let srt = feeds.compactMap { f in f.snapshot.srt.map { (f.feed, $0) } }
        guard !srt.isEmpty else { return "" }
        var out = "# HELP spyglass_srt_rtt_seconds SRT's smoothed round-trip time.\n# TYPE spyglass_srt_rtt_seconds gauge\n"
        for (feed, l) in srt { out += "spyglass_srt_rtt_seconds{feed=\"\(escape(feed))\"} \(l.roundTripMillis / 1000)\n" }
        out += "# HELP spyglass_srt_latency_seconds The receive latency both SRT ends agreed on.\n# TYPE spyglass_srt_latency_seconds gauge\n"
        for (feed, l) in srt { out += "spyglass_srt_latency_seconds{feed=\"\(escape(feed))\"} \(Double(l.latencyMillis) / 1000)\n" }
        return out
    }

    /// The feed's state as the `state` label names it (`live`, `stalled`, `waiting_for_data` …):
    /// a live feed with no picture shown for `stallMicros` reads `stalled`.
    public static func stateName(_ f: FeedMetrics, nowMicros: UInt64, stallMicros: UInt64) -> String {
        switch f.state {
        case .waitingForData: return "waiting_for_data"
        case .waitingForPicture: return "waiting_for_picture"
        case .live:
            if let last = f.snapshot.lastShownMicros, nowMicros > last + stallMicros { return "stalled" }
            return "live"
        case .connecting: return "connecting"
        case .reconnecting: return "reconnecting"
        case .ended: return "ended"
        case .failed: return "failed"
        }
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    static func help(_ m: Metric) -> String {
        "Spyglass counter \(m.rawValue.replacingOccurrences(of: "_", with: " ")) (see FeedSummary)."
    }
}
