#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed

/// The presenter: one feed in one window, on the main thread.
///
/// Takes the newest picture from the feed's ``FrameSlot`` when the window is woken, presents it,
/// stamps and logs it (``PresentationStamps``), and keeps the window honest about the feed:
/// "Waiting for video" with what has arrived, STALLED with the last picture's age, the `s`
/// statistics overlay (live from the feed's ``MetricsRegistry``), the replay keys and progress.
@MainActor public final class FeedWindow {
    /// What the presenter needs to know besides the feed.
    public struct Settings {
        /// A live source with no new picture for this long is shown as stalled, ms.
        public var stallMillis = 500.0
        /// Redraw every 8 ms so the `--clock` strip stays current for a camera.
        public var clock = false
        /// Fit the window to the first picture (no `--window-size` given).
        public var fitToVideo = true
        /// The source is live (stall detection applies).
        public var live = true
        /// What arrives is being recorded (`--record`): a REC tag stays on the picture.
        public var recording = false
        /// Glass-to-glass target of the live overlay, ms.
        public var targetMillis = 100.0
        /// Where `p` writes its PNG screenshots (the current folder by default).
        public var screenshotFolder = FileManager.default.currentDirectoryPath
        public init() {}
    }

    private let display: SDLDisplay
    private let pipeline: Pipeline
    private let slot: FrameSlot
    private let latency: LatencyRecorder?
    private let recording: RecordingSource?
    private let settings: Settings
    /// What the overlay shows: nothing, the run's link statistics (`s`) or the last second (`i`).
    private enum OverlayMode { case none, stats, live }
    private var mode = OverlayMode.none
    /// The live overlay's last registry snapshot (and when, µs), and the sparkline's history.
    private var liveBefore: (snapshot: MetricsRegistry.Snapshot, micros: UInt64)?
    private var liveHistory = GlassToGlassHistory()
    private var liveLines: [OverlayLine] = []
    /// Called about every 100 ms on the main thread (bench's progress line).
    public var onTick: (() -> Void)?

    /// - Parameters:
    ///   - display: the open window.
    ///   - pipeline: the feed (its label, state and metrics).
    ///   - slot: where its ``WindowSink`` puts pictures.
    ///   - latency: the per-frame log, if any.
    ///   - recording: the recording being replayed, for the replay keys and progress bar.
    ///   - settings: stall time, clock, fit, live.
    public init(display: SDLDisplay, pipeline: Pipeline, slot: FrameSlot, latency: LatencyRecorder?,
                recording: RecordingSource?, settings: Settings) {
        self.display = display
        self.pipeline = pipeline
        self.slot = slot
        self.latency = latency
        self.recording = recording
        self.settings = settings
    }

    /// The window title for a state.
    public func title(_ state: String) -> String { "Spyglass — \(pipeline.label) — \(state)" }

    /// Runs until the feed ends and its last picture is shown, or the user quits (then it stops
    /// the feed).
    public func run() {
        var presenter = Presenter()
        var lastTick = MonotonicClock.nowMicros()
        let started = lastTick
        while true {
            let now = MonotonicClock.nowMicros()
            if now - lastTick > 100_000 {
                lastTick = now
                onTick?()
                tick(now: now, started: started, presenter: &presenter)
            }
            // With --clock the strip must stay current for a camera: redraw every 8 ms.
            let event = display.waitEvent(timeoutMillis: settings.clock ? 8 : 100)
            if settings.clock && event == nil { display.redraw() }
            handle(event)
            if let frame = slot.take() { present(frame, &presenter) }
            if slot.isClosed {
                if let frame = slot.take() { present(frame, &presenter) }
                break
            }
        }
        display.setTitle(title("ended"))
    }

    private struct Presenter {
        var playing = false
        var lastFormat = ""
        var lastPresented: UInt64 = 0
        var stalled = false
        /// Datagrams (or reads) counted when the last picture was shown.
        var datagramsAtLastFrame = 0
        /// Datagrams (or reads) counted at the last tick, and when that count last changed (µs).
        var datagramsSeen = 0
        var lastDataMicros: UInt64 = 0
        /// The state badge last shown.
        var badge: TileBadge?
    }

    /// Why no picture comes: never "no data" while data arrives, and never "datagrams since the
    /// last picture" once none has come for the stall time (the last of a sender that exited).
    /// - Parameters:
    ///   - datagrams: datagrams (or reads) counted when the last picture was shown.
    ///   - silentMicros: µs since the last datagram (or read); `stallMicros`: the stall time, µs.
    nonisolated static func stallReason(_ s: FeedSummary, since datagrams: Int, silentMicros: UInt64, stallMicros: UInt64,
                            state: PipelineState, label: String) -> String {
        if state == .reconnecting { return "sender disconnected" }
        if case .connecting(let why) = state { return "cannot reach \(label): \(why)" }
        let arrived = s.datagrams - datagrams
        guard arrived > 0, silentMicros < stallMicros else { return "no data from \(label)" }
        let notRTP = s.notRTP > 0 ? ", \(s.notRTP) not RTP" : ""
        return "\(arrived) datagrams since the last picture, none made one\(notRTP)"
    }

    /// Shows a live source's state badge (as on the wall) and redraws when it reads differently.
    /// While pictures arrive no badge is drawn: a live picture stays clean for whoever reads it
    /// (the pattern's time codes, an observer, a camera); the title says "playing".
    /// - Parameter redraw: redraw the window when the badge changed (not when a picture is
    ///   about to be drawn anyway).
    private func updateBadge(now: UInt64, presenter p: inout Presenter, redraw: Bool = true) {
        guard settings.live else { return }
        let b = TileBadge.of(state: pipeline.state, lastPictureMicros: p.lastPresented == 0 ? nil : p.lastPresented,
                             nowMicros: now, stallMicros: UInt64(settings.stallMillis * 1000), live: settings.live,
                             refused: pipeline.metrics.count(.disallowed))
        guard p.badge.map({ b.drawsDifferently(from: $0) }) ?? true else { return }
        p.badge = b
        display.badge = b == .live ? nil : b
        // The title names the state the badge shows ("reconnecting", not "stalled").
        if p.stalled { display.setTitle(title(b.word)) }
        if redraw { display.redraw() }
    }

    private func tick(now: UInt64, started: UInt64, presenter p: inout Presenter) {
        updateBadge(now: now, presenter: &p)
        if let rec = recording {
            let pr = rec.progress
            let line = String(format: "%6.1f / %.1f s  frame %d / %d  %.2fx", pr.position, pr.duration, pr.frame, pr.frames, pr.speed)
            display.setProgress(fraction: pr.duration > 0 ? pr.position / pr.duration : 0, text: line, paused: pr.paused)
            if isatty(2) != 0 { writeStandardError("\r" + (pr.paused ? "paused  " : "playing ") + line + "   ") }
            if pr.paused { display.redraw() }
        }
        sampleLastSecond(now: now)
        if mode != .none && !p.stalled {
            showOverlay()
            display.redraw()
        }
        guard settings.live else { return }
        let s = pipeline.summary
        if s.datagrams != p.datagramsSeen || p.lastDataMicros == 0 { p.datagramsSeen = s.datagrams; p.lastDataMicros = now }
        if p.lastPresented == 0 {
            // Still waiting: say for how long and what has arrived.
            display.showMessage(["Waiting for video…", "from \(pipeline.label)",
                                 String(format: "%.0f s, %d datagrams, %d bytes", Double(now - started) / 1e6, s.datagrams, s.bytes)])
        } else if Double(now - p.lastPresented) / 1000 >= settings.stallMillis {
            // A frozen picture must not look live (the badge dims it).
            // The badge says "stalled" and the age; the overlay says why.
            let stall = UInt64(settings.stallMillis * 1000)
            currentStallReason = Self.stallReason(s, since: p.datagramsAtLastFrame, silentMicros: now - min(now, p.lastDataMicros),
                                             stallMicros: stall, state: pipeline.state, label: pipeline.label)
            showOverlay()
            display.redraw()
            if !p.stalled { p.stalled = true; display.setTitle(title(p.badge?.word ?? "stalled")) }
        }
    }

    private func handle(_ event: SDLDisplay.Event?) {
        switch event {
        case .quit?:
            pipeline.stop()
            slot.close()
        case .toggleFullscreen?:
            display.toggleFullscreen()
        case .key(.linkStatistics)?:
            mode = mode == .stats ? .none : .stats
            showOverlay()
            display.redraw()
        case .key(.gravity)?:
            display.gravity = display.gravity.next
            Log.info("gravity: \(display.gravity.rawValue)")
            display.redraw()
        case .key(.screenshot)?:
            let path = ScreenshotName.path(folder: settings.screenshotFolder, name: pipeline.label)
            // Written off the main thread; the job logs "screenshot: PATH" once the file is there.
            do { _ = try display.screenshot(path: path) } catch { Log.error("screenshot: \(error)") }
        case .key(.lastSecond)?:
            mode = mode == .live ? .none : .live
            showOverlay()
            display.redraw()
        case .key(let key)?:
            if let rec = recording { Self.replayKey(key, rec) }
        case .redraw?:
            display.redraw()
        default:
            break
        }
    }

    private func present(_ frame: DecodedFrame, _ p: inout Presenter) {
        var frame = frame
        if !p.playing && settings.fitToVideo {
            let (sn, sd) = frame.sampleAspectRatio
            display.fitWindow(width: frame.width * sn / max(1, sd), height: frame.height)
        }
        // The tags belong to this picture: set before it is drawn.
        display.tags = SDLDisplay.Tags(damaged: frame.damaged, recording: settings.recording)
        if let b = p.badge, b != .live {
            // "waiting for a keyframe" (or "stalled") goes with the first picture, not at the next
            // tick: drawn over up to three pictures, it hid the bottom rows an observer reads.
            p.lastPresented = MonotonicClock.nowMicros()
            updateBadge(now: p.lastPresented, presenter: &p, redraw: false)
        }
        frame.timing.renderStartMicros = MonotonicClock.nowMicros()
        guard display.present(frame) else {
            PresentationStamps.recordDropped(frame, metrics: pipeline.metrics, latency: latency)
            return
        }
        frame.timing.presentedMicros = MonotonicClock.nowMicros()
        p.lastPresented = frame.timing.presentedMicros
        p.datagramsAtLastFrame = pipeline.metrics.count(.datagrams)
        if p.stalled { p.stalled = false; p.playing = false; currentStallReason = nil; showOverlay() }
        PresentationStamps.record(frame, metrics: pipeline.metrics, latency: latency)
        let fmt = "\(pipeline.metrics.codec ?? "") \(frame.width)x\(frame.height)"
        if !p.playing || fmt != p.lastFormat {
            display.setTitle(title("playing \(fmt)"))
            p.playing = true
            p.lastFormat = fmt
        }
    }

    /// Once a second: the last second's figures (``FeedRates``) for the live overlay (`i`).
    private func sampleLastSecond(now: UInt64) {
        if let before = liveBefore, now - before.micros < 1_000_000 { return }
        let snapshot = pipeline.metrics.snapshot()
        defer { liveBefore = (snapshot, now) }
        guard let before = liveBefore else { return }
        let rates = FeedRates(from: before.snapshot, to: snapshot, seconds: Double(now - before.micros) / 1e6)
        liveHistory.append(rates.millis(.glassToGlass, quantile: 0.99))
        let age = snapshot.lastShownMicros.map { Double(now - min(now, $0)) / 1000 }
        let inputs = FeedOverlay.Inputs(snapshot: snapshot, rates: rates, frameAgeMillis: age, targetMillis: settings.targetMillis)
        liveLines = FeedOverlay.lines(inputs, compact: display.outputSize.height < 400)
    }

    /// Why no picture comes, while stalled (drawn above the `i` or `s` overlay).
    private var currentStallReason: String?

    /// The overlay of the mode (`i`, `s`, none), under the reason for a stall when there is one:
    /// a stalled feed is when an operator wants the frame age and the loss most.
    private func showOverlay() {
        let reason = currentStallReason.map { [OverlayLine($0, .bad)] } ?? []
        switch mode {
        case .none: display.setOverlay(lines: reason, sparkline: nil)
        case .stats: display.setOverlay(lines: reason + Self.statsLines(pipeline.summary).map { OverlayLine($0) }, sparkline: nil)
        case .live:
            display.setOverlay(lines: reason + (liveLines.isEmpty ? [OverlayLine("measuring the last second…")] : liveLines),
                               sparkline: (liveHistory, settings.targetMillis))
        }
    }

    /// Replay keys: space pause, . step, ←/→ seek 5 s, [ ] speed.
    private static func replayKey(_ key: Key, _ rec: RecordingSource) {
        switch key {
        case .pause: rec.togglePause()
        case .step: rec.step()
        case .seekBack: rec.seek(by: -5)
        case .seekForward: rec.seek(by: 5)
        case .slower: rec.changeSpeed(by: 0.5)
        case .faster: rec.changeSpeed(by: 2)
        default: break
        }
    }

    /// The counters a person watching a link wants on screen (`s` toggles them).
    public static func statsLines(_ s: FeedSummary) -> [String] {
        var lines = ["\(s.format ?? s.codec ?? "") · \(s.framesDecoded) decoded, \(s.framesDropped) dropped · decode p50 \(s.decodeMillisP50.map { String(format: "%.1f ms", $0) } ?? "–")"]
        if s.rtp {
            lines.append("RTP: \(s.datagramsLost) lost, \(s.datagramsReordered) reordered, \(s.datagramsDuplicated) duplicated"
                         + (s.ssrcChanges > 0 ? " · SSRC changes \(s.ssrcChanges)\(s.ssrcChanges > 1 ? " (several senders on this port?)" : "")" : "")
                         + (s.strayPackets > 0 ? " · another sender's packets dropped \(s.strayPackets)" : ""))
        }
        if let k = s.keyframeText { lines.append(k) }
        lines.append("damaged AUs \(s.damagedAccessUnits) · on damaged refs \(s.framesWithDamagedReferences) · concealed \(s.concealedFrames) · decode errors \(s.decodeErrors) · resets \(s.resets)")
        if s.tsPackets > 0 { lines.append("MPEG-TS: \(s.tsContinuityErrors) continuity errors, \(s.tsPacketsDropped) packets dropped") }
        if let l = s.srt { lines.append(FeedSummary.srtText(l)) }
        if let c = s.captureClock { lines.append("capture clock: \(c)") }
        if let c = s.captureSource { lines.append("capture time from: \(c)") }
        if let p = s.platform { lines.append("platform (KLV): \(p)") }
        if s.picturesSplit + s.prematureIdleFlushes > 0 {
            lines.append("raw stream guesses: \(s.prematureIdleFlushes) NAL units cut (\(s.repairs) repaired), \(s.picturesSplit) pictures split")
        }
        var refused: [String] = []
        if s.disallowed > 0 { refused.append("\(s.disallowed) disallowed") }
        if s.otherSenderDatagrams > 0 { refused.append("\(s.otherSenderDatagrams) from another sender") }
        if s.framingChanges > 0 { refused.append("framing changes \(s.framingChanges)") }
        if s.garbageRuns > 0 { refused.append("garbage runs \(s.garbageRuns)") }
        if s.truncatedDatagrams > 0 { refused.append("\(s.truncatedDatagrams) truncated") }
        if s.oversizeNALUnits + s.oversizeAccessUnits > 0 { refused.append("\(s.oversizeNALUnits + s.oversizeAccessUnits) oversize") }
        if s.emptyDatagrams > 0 { refused.append("\(s.emptyDatagrams) empty") }
        if !refused.isEmpty { lines.append(refused.joined(separator: " · ")) }
        return lines
    }
}
