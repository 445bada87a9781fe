import Foundation
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed

/// Spyglass's window, the one there is: one tile per feed, on the main thread. A single feed is a
/// wall of one tile.
///
/// Each feed keeps its own ``Pipeline`` and thread and hands its newest picture to its
/// ``FrameSlot``; the window takes the newest picture of each feed when woken, draws only the
/// tiles whose picture or words changed, and sends only those rectangles to the screen
/// (``WallSurface``: libswscale straight into the window surface, no renderer). A feed that stalls
/// or fails only changes its own tile: nothing here waits on a feed. Each picture is stamped and
/// logged as it is presented (``PresentationStamps``).
///
/// Keys: 1–9 or a click focus a feed in the whole window (the same key, a click or Esc go back),
/// Tab cycles the feeds, `a` cycles the gravity, `i` the overlay of the last second's numbers,
/// `s` the link's statistics, `p` writes a PNG screenshot, `f` fullscreen, `q` quits (Esc too,
/// on the wall); on a replay shown alone, space, `.`, ←/→ and `[`/`]` pause, step, seek and
/// change the speed.
@MainActor
public final class WallWindow {
    /// How the wall starts.
    public struct Settings: Sendable {
        /// A live feed with no new picture for this long is stalled, ms.
        public var stallMillis = 500.0
        /// The grid (nil: chosen from the number of feeds, ``WallLayout/automatic(feeds:)``).
        public var layout: WallLayout?
        /// How pictures fill their tiles.
        public var gravity = Gravity.letterbox
        /// The window's size, pixels.
        public var size = (width: 1280, height: 720)
        /// The window's position on the screen (nil: the window system chooses).
        public var position: (x: Int, y: Int)?
        /// Where `p` writes its screenshots.
        public var screenshotFolder = "."
        /// A single feed's window takes the first picture's size (no `--window-size` given).
        public var fitToFirstPicture = false
        /// `--clock`: a ``TimeCode`` of the wall clock along the window's bottom, redrawn every
        /// 8 ms, for a camera pointed at the screen to read; the tiles get the rest.
        public var clock = false
        /// Defaults: 500 ms stall, grid from the count, letterbox, 1280x720, screenshots in ".".
        public init() {}
    }

    let surface: WallSurface
    private let tiles: [WallTile]
    private let settings: Settings
    /// What is shown: the wall or one focused feed, and the gravity.
    public private(set) var view: WallView
    /// The window was asked to close.
    public private(set) var quitRequested = false
    /// The last screenshot asked for with `p`, being written or written (``PNGJob/path``).
    public private(set) var lastScreenshot: PNGJob?
    /// How many times each feed's tile has been drawn and presented (by feed index).
    public private(set) var tileDraws: [Int]
    /// How many of those draws took the picture shrunk on the feed's own thread (``TilePrescaler``).
    public private(set) var shrunkDraws: [Int]
    private var title = ""
    private var drawnSize = (width: 0, height: 0)
    private var lastSecondMicros: UInt64 = 0
    /// The window outside the tiles (grid cells with no feed, what a focused feed left) must be
    /// painted: slate, never black or stale.
    private var backgroundDirty = true
    /// One feed: its tile keeps its picture clean while live (``draw(_:in:)``).
    let single: Bool
    private var fitted = false
    private var lastStatusMicros: UInt64 = 0
    private var lastClockMicros: UInt64 = 0
    /// Called about every 100 ms on the main thread (bench's progress line).
    public var onTick: (() -> Void)?
    /// `b`: write a bug bundle of feed `i` (nil: of every feed); on the main thread.
    public var onBundle: ((Int?) -> Void)?

    /// Opens the window.
    /// - Parameters:
    ///   - system: the process's video system.
    ///   - feeds: the feeds, in tile order (at least one).
    ///   - settings: stall time, grid, gravity, size.
    /// - Throws: ``DisplayError`` when the window cannot be opened.
    public init(system: SDLVideoSystem, feeds: [WallFeed], settings: Settings) throws {
        self.settings = settings
        single = feeds.count == 1
        tiles = feeds.map { WallTile($0, fastScaling: feeds.count > 1) }
        fitted = !settings.fitToFirstPicture
        tileDraws = feeds.map { _ in 0 }
        shrunkDraws = tileDraws
        let layout = settings.layout ?? WallLayout.automatic(feeds: feeds.count)
        view = WallView(feeds: feeds.count, layout: layout, gravity: settings.gravity)
        surface = try WallSurface(system: system, title: "Spyglass — waiting", width: settings.size.width,
                                  height: settings.size.height, position: settings.position)
        if feeds.count > layout.capacity {
            Log.info("--layout \(layout) has \(layout.capacity) tiles for \(feeds.count) feeds: feeds \(layout.capacity + 1)…\(feeds.count) are shown only when focused (Tab)")
        }
    }

    /// Wakes the window from any thread (a feed has a picture); holding it does not hold the window.
    public nonisolated var waker: WakeSignal { surface.waker }

    /// Runs until every feed has ended and its last picture is shown, or the window is closed
    /// (then every feed is stopped).
    public func run() {
        while step(waitMillis: settings.clock ? 8 : 100) {}
        PNGJob.waitForAll()   // a screenshot asked for just before quitting is still written
    }

    /// One round: waits up to `waitMillis` for a picture or an input, applies the input, takes
    /// the newest pictures, and draws what changed.
    /// - Returns: false once the wall is done (closed, or every feed finished).
    @discardableResult
    public func step(waitMillis: Int) -> Bool {
        if let input = surface.waitInput(timeoutMillis: waitMillis) { apply(input) }
        if quitRequested { return false }
        for tile in tiles { _ = tile.takePicture() }
        fitToFirstPicture()
        compose()
        if tiles.allSatisfy(\.finished) {
            for tile in tiles { tile.dropUnshown() }
            return false
        }
        return true
    }

    /// Applies an input as if it came from the window (keys, clicks, close).
    public func apply(_ input: WallInput) {
        let size = tileArea(surface.size)
        switch view.apply(input, width: size.width, height: size.height) {
        case .none: if input == .redraw { markAllDirty() }
        case .redrawAll:
            if input == .key(.gravity) { Log.info("gravity: \(view.gravity.rawValue)") }
            markAllDirty()
        case .screenshot: lastScreenshot = screenshot()
        case .toggleFullscreen: surface.toggleFullscreen(); markAllDirty()
        case .replay(let key, let i): tiles[i].feed.replay.map { Self.replayKey(key, $0) }
        case .bundle(let i): onBundle?(i)
        case .quit:
            quitRequested = true
            for tile in tiles {
                tile.feed.pipeline?.stop()
                tile.feed.slot?.close()
                tile.dropUnshown()
            }
        }
    }

    /// The badge a feed's tile shows now (index from 0).
    public func badge(ofFeed i: Int) -> TileBadge { tiles[i].badge }

    /// Where feed `i` is drawn now; nil when it is not visible.
    public func rect(ofFeed i: Int) -> PixelRect? {
        let s = tileArea(surface.size)
        return view.visibleTiles(width: s.width, height: s.height).first { $0.feed == i }?.rect
    }

    /// The window's pixels in `rect` as 8-bit RGB, row by row; nil when they cannot be read.
    public func rgb(of rect: PixelRect) -> [UInt8]? { surface.rgb(of: rect) }

    /// The whole window as drawn now: its size and its pixels as 8-bit RGB, row by row; nil when
    /// the window cannot be read (`--snapshot` of a wall).
    public func windowPixels() -> (width: Int, height: Int, rgb: [UInt8])? {
        let s = surface.size
        return rgb(of: PixelRect(x: 0, y: 0, width: s.width, height: s.height)).map { (s.width, s.height, $0) }
    }

    /// The `i` overlay's lines for feed `i` (whether or not the overlay is on).
    public func overlayLines(ofFeed i: Int) -> [String] {
        tiles[i].overlay(compact: rect(ofFeed: i).map(Self.compact) ?? true).map(\.text)
    }

    /// The lines drawn over feed `i`'s picture now, for the overlay that is on (none: only a
    /// stall's reason).
    public func shownOverlayLines(ofFeed i: Int) -> [String] {
        tiles[i].overlayLines(view.overlayMode, compact: rect(ofFeed: i).map(Self.compact) ?? true).map(\.text)
    }

    /// The window title now.
    public var currentTitle: String { title }

    /// Every tile, and the window around them, must be drawn again.
    private func markAllDirty() {
        for tile in tiles { tile.dirty = true }
        backgroundDirty = true
    }

    /// A tile's picture unchanged for this long (10 s, µs: the feed's decoder closes then too)
    /// is kept at the window's size only (``WallTile/shrinkFrozenPicture``).
    static let frozenPictureMicros: UInt64 = 10_000_000

    /// Draws the visible tiles that changed and presents just those rectangles.
    private func compose() {
        let now = MonotonicClock.nowMicros()
        updateTiles(nowMicros: now)
        defer { updateTitle() }   // after the present: the title is not on a picture's path
        let size = surface.size
        guard size.width > 0, size.height > 0 else { return }
        if size != drawnSize { markAllDirty(); drawnSize = size }
        let area = tileArea(size)
        let visible = view.visibleTiles(width: area.width, height: area.height)
        aimPrescalers(visible)
        let changed = visible.filter { tiles[$0.feed].dirty }
        var rects = changed.map(\.rect)
        if backgroundDirty {
            let window = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
            surface.fill(window, Self.background)
            rects = [window]
            backgroundDirty = false
        }
        for (i, rect) in changed {
            if draw(tiles[i], in: rect) { shrunkDraws[i] += 1 }
            tileDraws[i] += 1
        }
        if let strip = clockStrip(size, nowMicros: now, force: !rects.isEmpty && rects[0].height == size.height) { rects.append(strip) }
        surface.present(rects)
        let presented = MonotonicClock.nowMicros()
        for (i, _) in changed { tiles[i].presented(renderStartMicros: now, presentedMicros: presented) }
    }

    /// Badges on every round; every 100 ms what the tiles say in words (and the caller's tick);
    /// every second the last second's overlay and the shrinking of frozen pictures.
    private func updateTiles(nowMicros now: UInt64) {
        let stall = UInt64(settings.stallMillis * 1000)
        for tile in tiles { tile.updateBadge(nowMicros: now, stallMicros: stall) }
        if now - lastStatusMicros >= 100_000 {
            lastStatusMicros = now
            for tile in tiles { tile.updateStatus(nowMicros: now, stallMicros: stall, statistics: view.overlayMode == .linkStatistics) }
            onTick?()
        }
        guard now - lastSecondMicros >= 1_000_000 else { return }
        lastSecondMicros = now
        let size = surface.size
        for tile in tiles {
            tile.updateSecond(nowMicros: now)
            if view.overlayMode == .lastSecond { tile.dirty = true }
            tile.shrinkFrozenPicture(nowMicros: now, frozenMicros: Self.frozenPictureMicros, fitting: size.width, size.height)
        }
    }

    /// The window less the `--clock` strip along its bottom: where the tiles go.
    private func tileArea(_ size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        guard settings.clock else { return size }
        return (size.width, max(1, size.height - TimeCode.stripHeight(width: size.width)))
    }

    /// `--clock`: draws the wall clock's time code along the bottom every 8 ms (or when the whole
    /// window was painted); returns the strip's rectangle when drawn.
    private func clockStrip(_ size: (width: Int, height: Int), nowMicros: UInt64, force: Bool) -> PixelRect? {
        guard settings.clock, force || nowMicros - lastClockMicros >= 8_000 else { return nil }
        lastClockMicros = nowMicros
        let h = TimeCode.stripHeight(width: size.width), b = TimeCode.blockSize(width: size.width)
        let strip = PixelRect(x: 0, y: size.height - h, width: size.width, height: h)
        surface.fill(strip, (0, 0, 0))
        for (i, bit) in TimeCode.bits(for: MonotonicClock.wallMicros()).enumerated() where bit {
            surface.fill(PixelRect(x: (i % TimeCode.blocksPerRow) * b, y: strip.y + (i / TimeCode.blocksPerRow) * b, width: b, height: b), (255, 255, 255))
        }
        return strip
    }

    /// A single feed's window takes its first picture's size, once (no `--window-size`).
    private func fitToFirstPicture() {
        guard !fitted, let frame = tiles.first?.picture else { return }
        fitted = true
        let (sn, sd) = frame.sampleAspectRatio
        surface.fit(width: frame.width * sn / max(1, sd), height: frame.height)
        markAllDirty()
    }

    /// Replay keys on the feed shown alone: space pause, `.` step, ←/→ seek 5 s, `[` `]` speed.
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

    /// Tells each feed's ``TilePrescaler`` the size of its tile now; feeds not on screen, none.
    private func aimPrescalers(_ visible: [(feed: Int, rect: PixelRect)]) {
        var rects: [PixelRect?] = tiles.map { _ in nil }
        for (i, rect) in visible { rects[i] = rect }
        for (tile, rect) in zip(tiles, rects) {
            tile.feed.prescaler?.aim(rect.map { TilePrescaler.Target(width: $0.width, height: $0.height, gravity: view.gravity) })
        }
    }

    private func updateTitle() {
        let t: String
        if let f = view.focus ?? (single ? 0 : nil) {
            t = "Spyglass — \(tiles[f].feed.name) — \(Self.titleState(of: tiles[f]))"
        } else {
            var counts: [(String, Int)] = []
            for w in tiles.map(\.badge.word) {
                if let i = counts.firstIndex(where: { $0.0 == w }) { counts[i].1 += 1 } else { counts.append((w, 1)) }
            }
            t = "Spyglass — \(tiles.count) feeds — " + counts.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
        }
        if t != title { surface.setTitle(t); title = t }
    }

    /// A feed's state in the title: "playing H.264 1280x720" while pictures come, else the
    /// badge's word ("stalled", "reconnecting", "ended"), the same word the badge says.
    private static func titleState(of tile: WallTile) -> String {
        switch tile.badge {
        case .live, .playing:
            guard let f = tile.picture else { return tile.badge.word }
            return (["playing", tile.feed.pipeline?.metrics.codec, "\(f.width)x\(f.height)"] as [String?]).compactMap { $0 }.joined(separator: " ")
        default: return tile.badge.word
        }
    }

    /// `p`: the window (the focused feed when one is focused) as a PNG named with the feed and
    /// time, written off the main thread (the job logs "screenshot: PATH" once it is there).
    private func screenshot() -> PNGJob? {
        let who = (view.focus ?? (single ? 0 : nil)).map { tiles[$0].feed.name } ?? "wall"
        let path = ScreenshotName.path(folder: settings.screenshotFolder, name: who)
        let s = surface.size
        do {
            return try surface.startPNG(PixelRect(x: 0, y: 0, width: s.width, height: s.height), path: path)
        } catch {
            Log.error("screenshot: \(error)")
            return nil
        }
    }
}
