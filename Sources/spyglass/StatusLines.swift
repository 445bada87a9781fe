import Foundation
import SpyglassCore
#if canImport(Glibc)
import Glibc
#endif

/// Headless `play`: one status line per feed on stderr (``FeedStatusLine``), rewritten in place
/// twice a second on a terminal, printed as plain lines every 10 s otherwise.
@MainActor final class StatusLines {
    private let terminal = isatty(2) != 0
    private var linesOnScreen = 0
    private var lastMicros = MonotonicClock.nowMicros()
    private var shownBefore: [Int: Int] = [:]

    /// How often the lines are written, µs.
    private var intervalMicros: UInt64 { terminal ? 500_000 : 10_000_000 }

    /// Writes the lines for `feeds` when the interval has passed.
    func tick(_ feeds: [PlayFeed]) {
        let now = MonotonicClock.nowMicros()
        guard now - lastMicros >= intervalMicros, !feeds.isEmpty else { return }
        let seconds = Double(now - lastMicros) / 1e6
        lastMicros = now
        let lines = feeds.map { line($0, now: now, seconds: seconds) }
        clear()
        writeStandardError(lines.map { $0 + "\n" }.joined())
        if terminal { linesOnScreen = lines.count }
    }

    /// Takes the lines off a terminal, before other output (a feed's summary).
    func clear() {
        guard linesOnScreen > 0 else { return }
        writeStandardError("\u{1B}[\(linesOnScreen)F\u{1B}[J")
        linesOnScreen = 0
    }

    private func line(_ f: PlayFeed, now: UInt64, seconds: Double) -> String {
        let snapshot = f.pipeline.metrics.snapshot()
        let shown = snapshot[.framesShown]
        let fps = Double(shown - (shownBefore[f.n] ?? 0)) / max(seconds, 0.001)
        shownBefore[f.n] = shown
        let age = snapshot.lastShownMicros.map { Double(now > $0 ? now - $0 : 0) / 1e6 }
        let g2g = snapshot.stages[.glassToGlass]?.quantileMicros(0.5).map { $0 / 1000 }
        return FeedStatusLine.text(feed: f.n, name: f.name, state: f.pipeline.state, fps: fps, ageSeconds: age,
                                   glassToGlassP50Millis: g2g)
    }
}
