import SpyglassFeed
/// What the window shows: every tile, or one feed focused in the whole window; the gravity; the
/// overlay. A single feed is a wall of one tile.
/// The keys and clicks of the wall change it; it knows nothing of SDL.
public struct WallView: Equatable, Sendable {
    /// The focused feed (index from 0), or nil for the whole wall.
    public private(set) var focus: Int?
    /// How pictures fill their tiles.
    public private(set) var gravity: Gravity
    /// What each tile's overlay shows: nothing, the last second's numbers (`i`) or the link's
    /// statistics since the start (`s`).
    public enum Overlay: Equatable, Sendable { case none, lastSecond, linkStatistics }
    /// The overlay now (`i` and `s` toggle it).
    public private(set) var overlayMode = Overlay.none
    /// The aircraft's OSD is drawn over feeds with telemetry (`o` toggles it; on at the start).
    public private(set) var osd = true
    /// The `i` overlay (the last second's numbers) is on.
    public var overlay: Bool { overlayMode == .lastSecond }
    /// The grid.
    public let layout: WallLayout
    /// How many feeds there are.
    public let feeds: Int

    /// What the window must do after an input.
    public enum Action: Equatable, Sendable {
        /// Nothing changed.
        case none
        /// What is shown changed: draw every visible tile again.
        case redrawAll
        /// Write a PNG screenshot.
        case screenshot
        /// Switch fullscreen.
        case toggleFullscreen
        /// Close the window (and stop the feeds).
        case quit
        /// A replay key (space, `.`, ←/→, `[`/`]`) for the feed shown alone (the focused one, or
        /// the only one): that feed's replay acts on it.
        case replay(Key, feed: Int)
        /// `b`: a bug bundle of the feed shown alone, or of every feed on the wall (nil).
        case bundle(feed: Int?)
    }

    /// - Parameters: feeds: how many; layout: the grid; gravity: the starting mode.
    public init(feeds: Int, layout: WallLayout, gravity: Gravity) {
        self.feeds = feeds
        self.layout = layout
        self.gravity = gravity
    }

    /// The feeds shown and their rectangles in a window `width` x `height`: the focused feed in
    /// the whole window, else each feed in its tile (feeds beyond the grid are not shown).
    public func visibleTiles(width: Int, height: Int) -> [(feed: Int, rect: PixelRect)] {
        if let focus { return [(focus, PixelRect(x: 0, y: 0, width: width, height: height))] }
        return (0..<min(feeds, layout.capacity)).map { ($0, layout.tile($0, width: width, height: height)) }
    }

    /// Applies a key or a click (other inputs change nothing here).
    /// - Parameters: input: the input; width/height: the window's size, pixels (for clicks).
    /// - Returns: what the window must do.
    public mutating func apply(_ input: WallInput, width: Int, height: Int) -> Action {
        switch input {
        case .quit: return .quit
        case .click(let x, let y):
            if focus != nil { focus = nil; return .redrawAll }
            guard let i = layout.tileIndex(atX: x, y: y, width: width, height: height), i < feeds else { return .none }
            focus = i
            return .redrawAll
        case .key(let k): return apply(key: k)
        case .redraw, .frameReady: return .none
        }
    }

    private mutating func apply(key: Key) -> Action {
        switch key {
        case .feed(let i):
            guard i < feeds else { return .none }
            focus = focus == i ? nil : i
            return .redrawAll
        case .escape:
            guard focus != nil else { return .quit }
            focus = nil
            return .redrawAll
        case .nextFeed:
            focus = focus.map { ($0 + 1) % feeds } ?? 0
            return .redrawAll
        case .gravity:
            gravity = gravity.next
            return .redrawAll
        case .lastSecond:
            overlayMode = overlayMode == .lastSecond ? .none : .lastSecond
            return .redrawAll
        case .osd:
            osd.toggle()
            return .redrawAll
        case .bundle:
            return .bundle(feed: focus ?? (feeds == 1 ? 0 : nil))
        case .linkStatistics:
            overlayMode = overlayMode == .linkStatistics ? .none : .linkStatistics
            return .redrawAll
        case .pause, .step, .seekBack, .seekForward, .slower, .faster:
            guard let shown = focus ?? (feeds == 1 ? 0 : nil) else { return .none }
            return .replay(key, feed: shown)
        case .screenshot: return .screenshot
        case .fullscreen: return .toggleFullscreen
        case .quit: return .quit
        default: return .none
        }
    }
}
