import Foundation
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed
import SpyglassDisplay
#endif

/// `play --display none`: one status line per feed (state, fps, bitrate, frame age,
/// glass-to-glass, loss), over the last second.
///
/// On a terminal the block is redrawn in place (ANSI cursor to the block's first line, erase to
/// the end), by default once a second, and taken off before a summary line is written; when a
/// log line was written since the last draw, the block starts afresh below it.
/// When stderr is not a terminal (a log file, a pipe), plain lines are written, by default every 10 s.
@MainActor final class StatusLines {
    private let pipelines: [Pipeline]
    private let names: [String]
    private let stallMicros: UInt64
    private let terminal: Bool
    private let periodMicros: UInt64
    private var previous: [MetricsRegistry.Snapshot]
    private var previousMicros: UInt64
    private var drawnLines = 0
    private var logLinesAtDraw = 0

    /// - Parameter everySeconds: the period (> 0); nil for the default of the terminal or not.
    /// - Parameter feeds: each feed's pipeline and the name it goes by (the wall file's `name=`, else the source).
    init(feeds: [(Pipeline, String)], stallMillis: Double, everySeconds: Double?) {
        pipelines = feeds.map(\.0)
        names = feeds.map(\.1)
        stallMicros = UInt64(stallMillis * 1000)
        terminal = isatty(2) != 0
        periodMicros = UInt64((everySeconds ?? (terminal ? 1 : 10)) * 1e6)
        previous = pipelines.map { $0.metrics.snapshot() }
        previousMicros = MonotonicClock.nowMicros()
    }

    /// Draws the block when its period has passed; call it often (every 20–100 ms).
    func tick() {
        let now = MonotonicClock.nowMicros()
        guard now - previousMicros >= periodMicros else { return }
        let snapshots = pipelines.map { $0.metrics.snapshot() }
        let seconds = Double(now - previousMicros) / 1e6
        let lines = pipelines.indices.map { i in
            Self.line(pipelines[i], name: names[i], snapshots[i], FeedRates(from: previous[i], to: snapshots[i], seconds: seconds),
                      nowMicros: now, stallMicros: stallMicros)
        }
        previous = snapshots
        previousMicros = now
        draw(lines)
    }

    private func draw(_ lines: [String]) {
        guard terminal else { writeStandardError(lines.map { "spyglass: \($0)\n" }.joined()); return }
        writeStandardError(takeBack() + lines.map { $0 + "\n" }.joined())
        drawnLines = lines.count
        logLinesAtDraw = Log.linesWritten
    }

    /// Takes the block off a terminal before other output (a feed's summary line).
    func clear() {
        let text = takeBack()
        if !text.isEmpty { writeStandardError(text) }
    }

    /// The escape that moves to the block's first line and erases to the end of the screen, when
    /// the block is the last thing written; "" otherwise (a log line since stays).
    private func takeBack() -> String {
        defer { drawnLines = 0 }
        guard drawnLines > 0 && Log.linesWritten == logLinesAtDraw else { return "" }
        return "\u{1B}[\(drawnLines)F\u{1B}[J"
    }

    /// One feed's line, e.g. `1 udp://:5600 · live · 30.0 fps · 2.1 Mb/s · age 12 ms · g2g p50 48.2 ms`.
    /// Glass-to-glass appears only when frames carried a capture time judged true.
    static func line(_ p: Pipeline, name: String, _ s: MetricsRegistry.Snapshot, _ r: FeedRates, nowMicros: UInt64, stallMicros: UInt64) -> String {
        let state = MetricsExposition.stateName(FeedMetrics(feed: "", state: p.state, snapshot: s), nowMicros: nowMicros, stallMicros: stallMicros)
        var parts = ["\(p.id) \(name)", state.replacingOccurrences(of: "_", with: " ")]
        if case .failed(let why) = p.state { parts[1] = "failed: \(why)" }
        if case .connecting(let why) = p.state { parts[1] = "connecting: \(why)" }
        parts.append(String(format: "%.1f fps", r.shownPerSecond))
        parts.append(FeedOverlay.bitrate(r.bitsPerSecond))
        if let last = s.lastShownMicros { parts.append("age \((nowMicros - min(nowMicros, last)) / 1000) ms") }
        if let g = r.millis(.glassToGlass, quantile: 0.5) {
            parts.append(String(format: "g2g p50 %.1f ms", g))
        } else if let why = s.clockStatus {
            parts.append(why)
        }
        if let added = r.millis(.receiverAdded, quantile: 0.99) { parts.append(String(format: "added p99 %.1f ms", added)) }
        if r.lost + r.damaged > 0 { parts.append("\(r.lost) lost, \(r.damaged) damaged") }
        return parts.joined(separator: " · ")
    }
}
