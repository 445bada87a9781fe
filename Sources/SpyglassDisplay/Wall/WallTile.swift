import Foundation
import SpyglassPipeline
import SpyglassFeed
/// A feed's tile on the main thread: its newest picture, whether that has been shown, its badge,
/// what it says in words (waiting, why it stalled, the `s` counters, a replay's progress), and
/// whether it must be drawn again (only changed tiles are).
@MainActor
final class WallTile {
    let feed: WallFeed
    /// The newest picture taken from the slot (kept: a redraw shows it again).
    private(set) var picture: DecodedFrame?
    /// The newest picture has not been presented yet.
    private(set) var pictureIsNew = false
    /// When the newest picture was taken from the slot, monotonic µs: the badge's age counts from
    /// there, so a feed hidden behind a focused one is not called stalled.
    private(set) var lastPictureMicros: UInt64?
    /// What the tile says about the feed.
    private(set) var badge = TileBadge.waitingForData
    /// Glass-to-glass of the pictures shown in the last second (pictures with a capture stamp).
    private var recent = RecentGlassToGlass()
    /// The newest of those came from an RTCP sender report: a lower bound (``CaptureSource/isLowerBound``).
    private var recentIsLowerBound = false
    /// What the tile shows beside a live badge; nil without capture stamps.
    private(set) var chip: LatencyChip?
    /// The `i` overlay's inputs for the last second (nil until two seconds have been seen).
    private(set) var second: FeedOverlay.Inputs?
    /// Glass-to-glass p99 of each of the last 10 seconds (the overlay's sparkline).
    private(set) var history = GlassToGlassHistory()
    private var before: (snapshot: MetricsRegistry.Snapshot, micros: UInt64)?
    /// The tile must be drawn again (new picture, badge, place or gravity changed).
    var dirty = true
    /// Keeps libswscale's context while the picture size and tile stay the same.
    let converter = PictureConverter()
    /// While no picture has come: what has arrived ("Waiting for video…", from where, how much).
    private(set) var waitingLines: [String] = []
    /// While a live feed is stalled: why no picture comes (``StallReason``); nil otherwise.
    private(set) var stallReason: String?
    /// The `s` overlay's lines (``LinkStatistics``), while it is on.
    private(set) var statisticsLines: [String] = []
    /// The aircraft's OSD (``OSD``), from the feed's telemetry; nil without a `--mavlink` input.
    private(set) var osd: OSD?
    /// A replay's progress bar: how far (0…1), its line, and whether it is paused.
    private(set) var progress: (fraction: Double, text: String, paused: Bool)?
    /// Datagrams (or reads) counted when the last picture was shown, and at the last status
    /// update with when that count last changed (µs): tell "no data" from "data, no picture".
    private var datagramsAtLastPicture = 0
    /// A picture was presented since the last status update (which then takes the count).
    private var presentedSinceStatus = false
    private var datagramsSeen = -1
    private var lastDataMicros: UInt64 = 0
    private let openedMicros = MonotonicClock.nowMicros()

    /// - Parameters: feed: the feed; fastScaling: libswscale's SIMD bilinear (a wall's many
    ///   small tiles) rather than its exact one (a single feed's window).
    init(_ feed: WallFeed, fastScaling: Bool = true) {
        self.feed = feed
        converter.fastScaling = fastScaling
    }

    /// Takes the slot's newest picture. A picture replaced before it was shown is counted as
    /// dropped, as ``WindowSink`` counts those replaced in the slot.
    /// - Returns: true when there was one.
    func takePicture() -> Bool {
        guard let frame = feed.slot?.take() else { return false }
        if pictureIsNew, let old = picture { drop(old) }
        picture = frame
        lastPictureMicros = MonotonicClock.nowMicros()
        pictureIsNew = true
        dirty = true
        return true
    }

    /// Stamps the new picture as shown at `presentedMicros` (drawn from `renderStartMicros`).
    func presented(renderStartMicros: UInt64, presentedMicros: UInt64) {
        guard pictureIsNew, var frame = picture else { return }
        frame.timing.renderStartMicros = renderStartMicros
        frame.timing.presentedMicros = presentedMicros
        picture = frame
        if let p = feed.pipeline { PresentationStamps.record(frame, metrics: p.metrics, latency: feed.latency) }
        presentedSinceStatus = true
        let t = frame.timing
        if t.captureWallMicros > 0 && t.captureSource != .clockOffset && frame.replayEntry == nil {
            let presentedWall = Int64(bitPattern: presentedMicros) + MonotonicClock.wallMinusMonotonicMicros
            let millis = Double(presentedWall - Int64(clamping: t.captureWallMicros)) / 1000
            if millis >= 0 {
                recent.add(presentedMicros: presentedMicros, millis: millis)
                recentIsLowerBound = t.captureSource.isLowerBound
            }
        }
        pictureIsNew = false
    }

    /// Re-reads the feed's state; marks the tile dirty when its badge reads differently.
    func updateBadge(nowMicros: UInt64, stallMicros: UInt64) {
        let state = feed.failure.map { PipelineState.failed($0) } ?? feed.pipeline?.state ?? .ended
        let b = TileBadge.of(state: state, lastPictureMicros: lastPictureMicros,
                             nowMicros: nowMicros, stallMicros: stallMicros, live: feed.live,
                             refused: feed.pipeline?.metrics.count(.disallowed) ?? 0)
        if b.drawsDifferently(from: badge) { dirty = true }
        badge = b
        chip = b == .live ? recent.worst(nowMicros: nowMicros).map {
            LatencyChip(millis: $0, targetMillis: feed.targetMillis, lowerBound: recentIsLowerBound)
        } : nil
    }

    /// A picture frozen for `frozenMicros` (the feed went away) is kept only as large as the
    /// window can show it: a 4K feed's last picture held 12 MB for as long as the wall ran
    /// (issue 17). It is scaled once, keeping its shape and sample aspect ratio, so that the
    /// focused view of a lost feed still shows its last picture at the window's full size.
    /// Pictures other than 8-bit 4:2:0 stay as they are.
    func shrinkFrozenPicture(nowMicros: UInt64, frozenMicros: UInt64, fitting width: Int, _ height: Int) {
        guard !pictureIsNew, let frame = picture, let last = lastPictureMicros, nowMicros >= last + frozenMicros,
              width > 0, height > 0, frame.width > width || frame.height > height else { return }
        let scale = min(Double(width) / Double(frame.width), Double(height) / Double(frame.height))
        let w = max(2, Int(Double(frame.width) * scale) & ~1), h = max(2, Int(Double(frame.height) * scale) & ~1)
        let whole = PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
        guard let still = PictureConverter().scaledCopy(of: frame.picture, source: whole, width: w, height: h) else { return }
        picture = frame.replacingPicture(with: still)
        dirty = true
    }

    /// Computes the last second's overlay from the feed's registry (call about once a second).
    func updateSecond(nowMicros: UInt64) {
        guard let metrics = feed.pipeline?.metrics else { return }
        let now = metrics.snapshot()
        defer { before = (now, nowMicros) }
        guard let (earlier, then) = before, nowMicros > then else { return }
        let rates = FeedRates(from: earlier, to: now, seconds: Double(nowMicros - then) / 1e6)
        let age = lastPictureMicros.map { Double(nowMicros - min(nowMicros, $0)) / 1000 }
        second = FeedOverlay.Inputs(snapshot: now, rates: rates, frameAgeMillis: age, targetMillis: feed.targetMillis ?? 100)
        history.append(rates.millis(.glassToGlass, quantile: 0.99))
    }

    /// The `i` overlay's lines: the full form, or the compact one for a tile under 360 pixels high.
    func overlay(compact: Bool) -> [OverlayLine] {
        second.map { FeedOverlay.lines($0, compact: compact) } ?? []
    }

    /// The lines over the picture for an overlay mode, under the reason for a stall when there is
    /// one: a stalled feed is when an operator wants the frame age and the loss most.
    func overlayLines(_ mode: WallView.Overlay, compact: Bool) -> [OverlayLine] {
        let reason = stallReason.map { [OverlayLine($0, .bad)] } ?? []
        switch mode {
        case .none: return reason
        case .linkStatistics: return reason + statisticsLines.map { OverlayLine($0) }
        case .lastSecond:
            let lines = overlay(compact: compact)
            return reason + (lines.isEmpty ? [OverlayLine("measuring the last second…")] : lines)
        }
    }

    /// About ten times a second: what the tile says in words (waiting, the stall's reason, the `s`
    /// counters, the replay's progress); marks the tile dirty when any of it reads differently.
    /// - Parameters: statistics: the `s` overlay is on; stallMicros: the stall time, µs.
    func updateStatus(nowMicros now: UInt64, stallMicros: UInt64, statistics: Bool) {
        if let rec = feed.replay { updateProgress(rec) }
        if let source = feed.telemetry {
            let (state, at) = source.telemetry(forPictureAt: picture?.replayEntry?.wallMicros)
            change(&osd, to: at == 0 ? nil : OSD.of(state, nowMicros: at))
        }
        guard let p = feed.pipeline else { return }
        let datagrams = p.metrics.count(.datagrams)
        if datagrams != datagramsSeen { datagramsSeen = datagrams; lastDataMicros = now }
        if presentedSinceStatus { datagramsAtLastPicture = datagrams; presentedSinceStatus = false }
        let stalled: Bool
        switch badge {
        case .stalled, .reconnecting, .connecting: stalled = feed.live
        default: stalled = false
        }
        guard statistics || picture == nil || stalled else {
            change(&stallReason, to: nil)
            change(&statisticsLines, to: [])
            return
        }
        let s = p.summary
        if picture == nil {
            change(&waitingLines, to: ["Waiting for video…", "from \(p.label)",
                                       String(format: "%.0f s, %d datagrams, %d bytes", Double(now - min(now, openedMicros)) / 1e6, s.datagrams, s.bytes)])
        }
        change(&stallReason, to: stalled ? StallReason.text(s, since: datagramsAtLastPicture, silentMicros: now - min(now, lastDataMicros),
                                                           stallMicros: stallMicros, state: p.state, label: p.label) : nil)
        change(&statisticsLines, to: statistics ? LinkStatistics.lines(s) : [])
    }

    private func updateProgress(_ rec: RecordingSource) {
        let pr = rec.progress
        let line = String(format: "%6.1f / %.1f s  frame %d / %d  %.2fx", pr.position, pr.duration, pr.frame, pr.frames, pr.speed)
        let now = (fraction: pr.duration > 0 ? max(0, min(1, pr.position / pr.duration)) : 0, text: line, paused: pr.paused)
        if progress.map({ $0.text != now.text || $0.paused != now.paused }) ?? true { dirty = true }
        progress = now
    }

    private func change<T: Equatable>(_ value: inout T, to new: T) {
        if value != new { value = new; dirty = true }
    }

    /// The feed ended and its last picture was taken.
    var finished: Bool { feed.slot.map { $0.isClosed && !$0.hasFrame } ?? true }

    /// At the end: a picture never shown is counted and logged as dropped.
    func dropUnshown() {
        if pictureIsNew, let frame = picture { drop(frame); pictureIsNew = false }
    }

    private func drop(_ frame: DecodedFrame) {
        if let p = feed.pipeline { PresentationStamps.recordDropped(frame, metrics: p.metrics, latency: feed.latency) }
    }
}
