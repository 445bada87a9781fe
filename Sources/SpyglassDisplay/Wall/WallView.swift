import SpyglassFeed
/// What the wall shows: every tile, or one feed focused in the whole window, and the gravity.
/// The keys and clicks of the wall change it; it knows nothing of SDL.
public struct WallView: Equatable, Sendable {
    /// The focused feed (index from 0), or nil for the whole wall.
    public private(set) var focus: Int?
    /// How pictures fill their tiles.
    public private(set) var gravity: Gravity
    /// The `i` overlay (the last second's numbers) is on.
    public private(set) var overlay = false
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
    }

    /// Key codes the wall reads (SDL key codes: ASCII for these).
    public enum Key {
        /// Esc: back to the wall, or quit from it.
        public static let escape: Int32 = 27
        /// Tab: focus the next feed.
        public static let tab: Int32 = 9
        /// `a`: the next gravity.
        public static let gravity = Int32(UInt8(ascii: "a"))
        /// `i`: the overlay of the last second's numbers.
        public static let overlay = Int32(UInt8(ascii: "i"))
        /// `p`: a PNG screenshot.
        public static let screenshot = Int32(UInt8(ascii: "p"))
        /// `q`: quit.
        public static let quit = Int32(UInt8(ascii: "q"))
        /// `f`: fullscreen.
        public static let fullscreen = Int32(UInt8(ascii: "f"))
        /// `1` (feed 1) to `9` (feed 9).
        public static let one = Int32(UInt8(ascii: "1")), nine = Int32(UInt8(ascii: "9"))
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

    private mutating func apply(key k: Int32) -> Action {
        switch k {
        case Key.one...Key.nine:
            let i = Int(k - Key.one)
            guard i < feeds else { return .none }
            focus = focus == i ? nil : i
            return .redrawAll
        case Key.escape:
            guard focus != nil else { return .quit }
            focus = nil
            return .redrawAll
        case Key.tab:
            focus = focus.map { ($0 + 1) % feeds } ?? 0
            return .redrawAll
        case Key.gravity:
            gravity = gravity.next
            return .redrawAll
        case Key.overlay:
            overlay.toggle()
            return .redrawAll
        case Key.screenshot: return .screenshot
        case Key.fullscreen: return .toggleFullscreen
        case Key.quit: return .quit
        default: return .none
        }
    }
}
