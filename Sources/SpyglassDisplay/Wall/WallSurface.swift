import CSDL2
import CFFmpeg
import Foundation
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed

/// One SDL window drawn through its window surface, with no renderer: pictures are scaled by
/// libswscale straight into their rectangle of the surface, and only the rectangles that changed
/// go to the screen (`SDL_UpdateWindowSurfaceRects`; on X11 an MIT-SHM put of each rectangle).
///
/// A renderer would present the whole window on every change: with 16 tiles at 30 fps that is
/// 480 full-window presents a second, where a surface sends 480 tile-sized rectangles.
///
/// Main thread only. Other threads reach it only through ``waker``.
@MainActor
final class WallSurface {
    /// The window, its events and its wake-up.
    let window: SDLWindow
    /// Fonts opened so far, by pixel size (``text(_:x:y:maxWidth:colour:pixels:)``).
    private var fonts: [Int32: OpaquePointer] = [:]
    private let fontPath: String
    private let fontsAvailable: Bool
    private var failureLogged = false
    /// Rendered lines of text, by text: a tile's name and badge are drawn with every picture.
    private var textCache: [TextKey: UnsafeMutablePointer<SDL_Surface>] = [:]
    private struct TextKey: Hashable {
        let line: String
        let rgb: UInt32
        let pixels: Int32
    }
    /// More lines than this (a stall's age counts up) and the cache starts again.
    private static let textCacheLimit = 256
    /// Nor more pixels than this (1 MiB of 32-bit text): a stall's reason counting datagrams or
    /// a wall of ages renders a new line often, and 256 wide lines held 8 MiB.
    private static let textCachePixelLimit = 256 << 10
    private var textCachePixels = 0
    /// The smallest text height, pixels (a wall's small tiles).
    static let fontPixels: Int32 = 15

    /// The text height for a tile `height` pixels high: 15 px in a wall's small tiles, growing
    /// with the tile to 24 px at 720 lines and 28 at most, so that a single feed's window reads
    /// from across a room (issue 21 asks at least 20 px at 720p).
    static func fontPixels(forTileHeight height: Int) -> Int32 {
        Int32(max(Int(fontPixels), min(28, height / 30)))
    }

    /// Opens the window.
    /// - Throws: ``DisplayError`` when SDL cannot open it.
    init(system: SDLVideoSystem, title: String, width: Int, height: Int, position: (x: Int, y: Int)?,
         fontPath: String = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf") throws {
        window = try SDLWindow(system: system, title: title, width: width, height: height, position: position)
        self.fontPath = fontPath
        fontsAvailable = system.fontsAvailable
    }

    isolated deinit {
        for t in textCache.values { SDL_FreeSurface(t) }
        for f in fonts.values { TTF_CloseFont(f) }
    }

    /// The font at `pixels` (opened on first use); nil when fonts cannot be opened.
    private func font(_ pixels: Int32) -> OpaquePointer? {
        if let f = fonts[pixels] { return f }
        guard fontsAvailable, let f = TTF_OpenFont(fontPath, pixels) else { return nil }
        fonts[pixels] = f
        return f
    }

    /// The width of `line` at `pixels`, pixels (0 without a font).
    func textWidth(_ line: String, pixels: Int32 = fontPixels) -> Int {
        guard let font = font(pixels) else { return 0 }
        var w: Int32 = 0, h: Int32 = 0
        TTF_SizeUTF8(font, line, &w, &h)
        return Int(w)
    }

    /// Wakes ``waitInput(timeoutMillis:)`` from any thread, without holding the window.
    nonisolated var waker: WakeSignal { window.waker }

    /// The surface (a resize replaces it) and its pixel format for libswscale; nil when the
    /// window has no 32-bit RGB surface.
    private func target() -> (UnsafeMutablePointer<SDL_Surface>, AVPixelFormat)? {
        guard let s = SDL_GetWindowSurface(window.pointer) else { return fail("no window surface: \(String(cString: SDL_GetError()))") }
        switch s.pointee.format.pointee.format {
        case SDL_PIXELFORMAT_RGB888.rawValue: return (s, AV_PIX_FMT_BGR0)
        case SDL_PIXELFORMAT_ARGB8888.rawValue: return (s, AV_PIX_FMT_BGRA)
        default: return fail("window surface is not 32-bit RGB")
        }
    }

    private func fail<T>(_ why: String) -> T? {
        if !failureLogged { Log.error("cannot draw the wall: \(why)"); failureLogged = true }
        return nil
    }

    /// The window's size in pixels (its surface's).
    var size: (width: Int, height: Int) {
        guard let (s, _) = target() else { return (0, 0) }
        return (Int(s.pointee.w), Int(s.pointee.h))
    }

    /// Limits drawing to `rect` until the next call (nil: the whole window).
    func clip(to rect: PixelRect?) {
        guard let (s, _) = target() else { return }
        if var r = rect.map(sdl) { SDL_SetClipRect(s, &r) } else { SDL_SetClipRect(s, nil) }
    }

    /// Fills `rect` with an opaque colour.
    func fill(_ rect: PixelRect, _ c: (r: UInt8, g: UInt8, b: UInt8)) {
        guard let (s, _) = target() else { return }
        var r = sdl(rect)
        SDL_FillRect(s, &r, SDL_MapRGB(s.pointee.format, c.r, c.g, c.b))
    }

    /// Scales the part `source` of `frame` into `destination` (inside the window).
    /// - Returns: false when libswscale cannot convert it.
    func draw(_ frame: DecodedPicture, source: PixelRect, into destination: PixelRect, converter: PictureConverter) -> Bool {
        guard let (s, format) = target(), let pixels = s.pointee.pixels else { return false }
        let d = intersect(destination, PixelRect(x: 0, y: 0, width: Int(s.pointee.w), height: Int(s.pointee.h)))
        guard d == destination, d.width > 0, d.height > 0 else { return false }
        let pitch = Int(s.pointee.pitch)
        return converter.convert(frame, into: pixels + d.y * pitch + d.x * 4, pitch: pitch, width: d.width,
                                 height: d.height, format: format, source: source)
    }

    /// Darkens `rect` to a quarter of its brightness: a frozen picture must not look live.
    func dim(_ rect: PixelRect) {
        guard let (s, _) = target(), let pixels = s.pointee.pixels else { return }
        let r = intersect(rect, PixelRect(x: 0, y: 0, width: Int(s.pointee.w), height: Int(s.pointee.h)))
        let pitch = Int(s.pointee.pitch)
        for y in r.y..<(r.y + r.height) {
            let row = (pixels + y * pitch + r.x * 4).assumingMemoryBound(to: UInt32.self)
            for x in 0..<r.width { row[x] = (row[x] >> 2) & 0x3F3F_3F3F }
        }
    }

    /// A filled disc centred on (`cx`, `cy`): a shape, never a glyph the font may lack.
    func disc(cx: Int, cy: Int, radius: Int, _ c: (r: UInt8, g: UInt8, b: UInt8)) {
        for dy in -radius...radius {
            let half = Int(Double(radius * radius - dy * dy).squareRoot())
            fill(PixelRect(x: cx - half, y: cy + dy, width: 2 * half + 1, height: 1), c)
        }
    }

    /// Draws one line of text with its top-left corner at (`x`, `y`) on a dark box, cut to
    /// `maxWidth` pixels, in `colour` (light grey by default), `pixels` high. Nothing when no
    /// font could be opened.
    /// - Returns: the box drawn (empty when none).
    @discardableResult
    func text(_ line: String, x: Int, y: Int, maxWidth: Int,
              colour: (r: UInt8, g: UInt8, b: UInt8) = (240, 240, 240), pixels: Int32 = fontPixels) -> PixelRect {
        guard let (s, _) = target(), !line.isEmpty, maxWidth > 8, let t = rendered(line, colour, pixels) else {
            return PixelRect(x: x, y: y, width: 0, height: 0)
        }
        let box = PixelRect(x: x, y: y, width: min(Int(t.pointee.w) + 8, maxWidth), height: Int(t.pointee.h) + 4)
        fill(box, (16, 16, 20))
        var src = SDL_Rect(x: 0, y: 0, w: Int32(box.width - 8), h: t.pointee.h)
        var dst = SDL_Rect(x: Int32(x + 4), y: Int32(y + 2), w: src.w, h: src.h)
        SDL_UpperBlit(t, &src, s, &dst)
        return box
    }

    /// `line` rendered in `colour`, from the cache when it was drawn before; nil without a font.
    private func rendered(_ line: String, _ colour: (r: UInt8, g: UInt8, b: UInt8), _ pixels: Int32) -> UnsafeMutablePointer<SDL_Surface>? {
        let key = TextKey(line: line, rgb: UInt32(colour.r) << 16 | UInt32(colour.g) << 8 | UInt32(colour.b), pixels: pixels)
        if let t = textCache[key] { return t }
        guard let font = font(pixels), let t = TTF_RenderUTF8_Blended(font, line, SDL_Color(r: colour.r, g: colour.g, b: colour.b, a: 255)) else { return nil }
        if textCache.count >= Self.textCacheLimit || textCachePixels + Int(t.pointee.w * t.pointee.h) > Self.textCachePixelLimit {
            for old in textCache.values { SDL_FreeSurface(old) }
            textCache.removeAll()
            textCachePixels = 0
        }
        textCache[key] = t
        textCachePixels += Int(t.pointee.w * t.pointee.h)
        return t
    }

    /// Sends the rectangles `rects` of the surface to the screen, in one call.
    func present(_ rects: [PixelRect]) {
        guard !rects.isEmpty else { return }
        var r = rects.map(sdl)
        SDL_UpdateWindowSurfaceRects(window.pointer, &r, Int32(r.count))
    }

    /// The pixels of `rect` as 8-bit RGB, row by row (what the window shows there).
    /// - Returns: nil when the surface cannot be read.
    func rgb(of rect: PixelRect) -> [UInt8]? {
        guard let copy = copySurface(rect) else { return nil }
        defer { SDL_FreeSurface(copy) }
        var out = [UInt8](repeating: 0, count: rect.width * rect.height * 3)
        let pitch = Int(copy.pointee.pitch)
        let pixels = copy.pointee.pixels.assumingMemoryBound(to: UInt8.self)
        for y in 0..<rect.height {
            for i in 0..<(rect.width * 3) { out[y * rect.width * 3 + i] = pixels[y * pitch + i] }
        }
        return out
    }

    /// Copies `rect` of the window and starts writing it as a PNG file off the main thread.
    /// - Returns: the write under way (``PNGJob``).
    /// - Throws: ``PNGJob/ScreenshotError`` when the window cannot be read.
    func startPNG(_ rect: PixelRect, path: String) throws -> PNGJob {
        guard let pixels = rgb(of: rect) else { throw PNGJob.ScreenshotError(description: "\(path): \(String(cString: SDL_GetError()))") }
        return PNGJob(rgb: pixels, width: rect.width, height: rect.height, path: path)
    }

    /// A new RGB24 surface holding `rect` of the window.
    private func copySurface(_ rect: PixelRect) -> UnsafeMutablePointer<SDL_Surface>? {
        guard let (s, _) = target(), rect.width > 0, rect.height > 0,
              let copy = SDL_CreateRGBSurfaceWithFormat(0, Int32(rect.width), Int32(rect.height), 24, SDL_PIXELFORMAT_RGB24.rawValue)
        else { return nil }
        SDL_SetClipRect(s, nil)
        var src = sdl(rect)
        guard SDL_UpperBlit(s, &src, copy, nil) == 0 else { SDL_FreeSurface(copy); return nil }
        return copy
    }

    /// Sets the title (UTF-8; SDL sets `_NET_WM_NAME` on X11).
    func setTitle(_ title: String) { window.setTitle(title) }

    /// Switches between windowed and desktop fullscreen.
    func toggleFullscreen() { window.toggleFullscreen() }

    /// Resizes the window to a picture's size, scaled down to fit the screen (``SDLWindow/fit(width:height:)``).
    func fit(width: Int, height: Int) { window.fit(width: width, height: height) }

    /// Waits up to `timeoutMillis` for input (``SDLWindow/wait(timeoutMillis:frameReady:translate:)``):
    /// keys and window events first, then a feed's picture.
    /// - Returns: the input, or nil on timeout.
    func waitInput(timeoutMillis: Int) -> WallInput? {
        window.wait(timeoutMillis: timeoutMillis, frameReady: .frameReady, translate: WallInput.init)
    }

    private func sdl(_ r: PixelRect) -> SDL_Rect { SDL_Rect(x: Int32(r.x), y: Int32(r.y), w: Int32(r.width), h: Int32(r.height)) }

    private func intersect(_ a: PixelRect, _ b: PixelRect) -> PixelRect {
        let x0 = max(a.x, b.x), y0 = max(a.y, b.y)
        let x1 = min(a.x + a.width, b.x + b.width), y1 = min(a.y + a.height, b.y + b.height)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}
