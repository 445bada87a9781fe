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

/// What `spyglass bench` prints after its run, a line each: the per-stage table (p50/p95/p99/max,
/// ms), the pictures decoded, shown and dropped, SRT's link statistics, with `--loss` the
/// packets lost, keyframe requests and recoveries, and the verdict.
public func benchReport(recorder: LatencyRecorder, summary s: FeedSummary?, lossGiven: Bool, verdict: BenchVerdict) -> [String] {
    var lines = [recorder.table()]
    if let s { lines.append("frames: \(s.framesDecoded) decoded, \(s.framesDisplayed) displayed, \(s.framesDropped) dropped; \(s.decodeErrors) decode errors") }
    if let l = s?.srt { lines.append(FeedSummary.srtText(l)) }
    if let s, lossGiven {
        lines.append("loss: \(s.datagramsLost) packets lost; \(s.keyframeRequestsLoss + s.keyframeRequestsCut) keyframe requests; clean again \(s.recoveries) time\(s.recoveries == 1 ? "" : "s")"
                     + (s.recoveryMillisP50.map { String(format: ", recovery p50 %.0f ms", $0) } ?? ""))
    }
    lines.append(verdict.line)
    return lines
}

/// `spyglass bench`'s progress: a bar redrawn in place on a terminal (`tty`), else a line a
/// second for a log (nil between them). `elapsed` and `duration` in seconds.
public func benchProgress(elapsed: Double, duration: Double, frames: Int, tty: Bool, lastLineSecond: inout Int) -> String? {
    let frac = min(1, elapsed / duration)
    let bar = String(repeating: "█", count: Int(frac * 30)) + String(repeating: "·", count: 30 - Int(frac * 30))
    if tty { return String(format: "\r  [%@] %4.1f/%.0f s  %d frames", bar, min(elapsed, duration), duration, frames) }
    guard Int(elapsed) > lastLineSecond else { return nil }
    lastLineSecond = Int(elapsed)
    return String(format: "  %4.0f/%.0f s  %d frames\n", min(elapsed, duration), duration, frames)
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
