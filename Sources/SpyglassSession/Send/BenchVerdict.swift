import Foundation
import SpyglassFeed

/// `spyglass bench`'s verdict: glass-to-glass p99 against the target, or why there is no figure.
public struct BenchVerdict {
    /// The verdict line ("verdict: PASS glass-to-glass p99 … ≤ 100 ms target …").
    public let line: String
    /// True when glass-to-glass p99 was within the target.
    public let passed: Bool

    /// - Parameters:
    ///   - recorder: the feed's per-frame timing.
    ///   - summary: the feed's summary (where capture times came from, a clock offset).
    ///   - targetMillis: the glass-to-glass target, ms.
    ///   - relative: `--clock-offset relative`: the figure is measured from the fastest frame.
    public init(recorder: LatencyRecorder, summary s: FeedSummary?, targetMillis target: Double, relative: Bool) {
        if let g = recorder.percentiles("glass-to-glass") {
            passed = g.p99 <= target
            let note = relative ? " (relative: measured from the fastest frame, clocks not synchronized)" : ""
            line = String(format: "verdict: %@ glass-to-glass p99 %.1f ms %@ %.0f ms target (p50 %.1f ms)%@; capture times from %@",
                          passed ? "PASS" : "FAIL", g.p99, passed ? "≤" : ">", target, g.p50, note, s?.captureSource ?? "none")
        } else if let clock = s?.captureClock {
            passed = false
            line = "verdict: clock offset: \(clock) (synchronize the clocks, or --clock-offset-ms N, or --clock-offset relative)"
        } else {
            passed = false
            line = "verdict: no frame carried a capture stamp"
        }
    }
}

/// Runs tools/plot-latency (matplotlib) on a latency log, if the tool can be found.
/// - Returns: one line: where the plot went, or why there is none.
public func plotLatency(csv: String, png: String, title: String) -> String {
    guard let tool = toolPath("plot-latency") else { return "plot: tools/plot-latency not found (run from the repository root)" }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: tool)
    p.arguments = [csv, png, "--title", title]
    do {
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus == 0 ? "plot: \(png)" : "plot: tools/plot-latency failed (\(p.terminationStatus))"
    } catch {
        return "plot: \(error)"
    }
}
