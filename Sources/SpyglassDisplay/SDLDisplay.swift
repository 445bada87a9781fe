import CSDL2
import CFFmpeg
import Foundation
import Synchronization
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed

/// An SDL2 window: each picture letterboxed at the window's size, resizable, with status text.
///
/// Runs on the main thread, like the ``SDLVideoSystem`` it belongs to; several windows may share
/// one system. Other threads only call ``wake()``, which signals this window's own condition that
/// its waiting ``waitEvent(timeoutMillis:)`` sleeps on, so a ready frame wakes the display at once
/// and wakes no other window. (An SDL user event would go through the X server on X11: about
/// 0.4 ms more per frame, measured under Xvfb.) Window-system events are polled every
/// ``SDLWindow/inputPollMillis`` meanwhile, and each window gets only the events addressed to it.
///
/// Two ways to the screen:
/// - **Direct** (when SDL's software renderer is the one in use, as under Xvfb): libswscale
///   writes the picture straight into the window's surface, in the stream's matrix and range
///   (``PictureConverter``); text and bars are drawn on the same surface by a software renderer;
///   the surface goes to X by MIT-SHM. No texture copy, no blit: about 0.6 ms per 720p picture
///   against 1.5 ms through a texture, measured under Xvfb.
/// - **Texture** (a GPU renderer): SDL2's YUV textures know BT.601 (limited and full) and BT.709
///   limited; those go straight in as IYUV with the matching `SDL_YUV_CONVERSION_MODE`.
///   Everything else (BT.709 full range, BT.2020, 4:2:2, 4:4:4, 10-bit, NV12, …) is converted
///   to RGB by ``PictureConverter`` into an RGB texture.
@MainActor
public final class SDLDisplay {
    /// What the window asks of its owner.
    public enum Event: Equatable, Sendable {
        /// Close: q or Esc, the window's close button, or SDL_QUIT.
        case quit
        /// The f key.
        case toggleFullscreen
        /// The window was exposed, resized, moved or focused: draw it again.
        case redraw
        /// ``SDLDisplay/wake()`` was called: a frame is ready.
        case frameReady
        /// Any other key pressed (``Key``).
        case key(Key)
    }

    /// Errors starting SDL or creating the window.
    public enum DisplayError: Error, CustomStringConvertible, Sendable {
        /// SDL failed; the text is `SDL_GetError()`.
        case sdl(String)
        /// "SDL: " and SDL's error text.
        public var description: String {
            switch self { case .sdl(let s): return "SDL: \(s)" }
        }
    }

    /// The window, its events and its wake-up.
    private let window: SDLWindow
    /// The video system this window belongs to (kept alive by the window).
    public var system: SDLVideoSystem { window.system }
    /// SDL's id of the window (`SDL_GetWindowID`): the `windowID` that SDL events addressed to it carry.
    public var windowID: UInt32 { window.id }
    private var renderer: OpaquePointer?
    private var texture: OpaquePointer?
    private var textureKey: TextureKey?
    private let converter = PictureConverter()
    /// Direct mode: the window surface the software renderer draws on, and its pixel format.
    private var directSurface = false
    private var surface: UnsafeMutablePointer<SDL_Surface>?
    private var surfaceFormat = AV_PIX_FMT_BGR0
    private var surfaceSize = (0, 0)
    private var lastFrame: DecodedFrame?
    private var font: OpaquePointer?
    private var lastAspect: Double = 16.0 / 9.0
    private var lastSize = (width: 0, height: 0)
    /// How the picture fills the window (`a`, `--gravity`): letterbox (default), fill (cropped to
    /// cover) or stretch. Drawn from the next redraw on.
    public var gravity = Gravity.letterbox
    private var hasPicture = false
    private var overlay: [OverlayLine] = []
    /// The live overlay's sparkline of glass-to-glass, with its target (ms); nil: none.
    private var sparkline: (history: GlassToGlassHistory, targetMillis: Double)?
    private var message: [String] = ["Waiting for video…"]
    /// The SDL renderer in use ("opengl", "software", …).
    public private(set) var rendererName = "?"
    /// When true, each present also reads back the rendered picture into ``lastReadback``.
    public var captureReadback = false
    /// RGB24 pixels of the last presented picture (width, height, bytes), when ``captureReadback``.
    public private(set) var lastReadback: (width: Int, height: Int, rgb: [UInt8])?

    private struct TextureKey: Equatable {
        var width: Int32, height: Int32
        var format: Int32
        var yuvMode: Int   // -1 = RGB via swscale
    }

    /// Opens a window.
    /// - Parameters:
    ///   - system: the process's video system (SDL initialized, events routed); the window keeps it alive.
    ///   - title: window title.
    ///   - width: initial client width, pixels.
    ///   - height: initial client height, pixels.
    ///   - vsync: wait for vertical blank on present (off by default: latency).
    ///   - position: window position on the screen, pixels (nil = let the window system choose).
    ///   - fontPath: TrueType font for status text (DejaVu Sans by default; text is skipped if missing).
    /// - Throws: ``DisplayError`` when SDL cannot open the window or give it a renderer.
    public init(system: SDLVideoSystem, title: String, width: Int = 960, height: Int = 540, vsync: Bool = false,
                position: (x: Int, y: Int)? = nil,
                fontPath: String = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf") throws {
        let sdlWindow = try SDLWindow(system: system, title: title, width: width, height: height, position: position)
        self.window = sdlWindow
        let window = sdlWindow.pointer
        let flags = vsync ? SDL_RENDERER_PRESENTVSYNC.rawValue : 0
        let driverChosen = ProcessInfo.processInfo.environment["SDL_RENDER_DRIVER"] != nil
        if !driverChosen, let gl = system.softwareOpenGL {
            // An earlier window found OpenGL to be a software rasterizer: straight to software.
            renderer = SDL_CreateRenderer(window, -1, flags | SDL_RENDERER_SOFTWARE.rawValue)
            guard renderer != nil else { throw DisplayError.sdl(String(cString: SDL_GetError())) }
            rendererName = "software (OpenGL here is \(gl))"
        } else {
            renderer = SDL_CreateRenderer(window, -1, flags | SDL_RENDERER_ACCELERATED.rawValue)
                ?? SDL_CreateRenderer(window, -1, flags | SDL_RENDERER_SOFTWARE.rawValue)
            guard renderer != nil else { throw DisplayError.sdl(String(cString: SDL_GetError())) }
            var info = SDL_RendererInfo()
            if SDL_GetRendererInfo(renderer, &info) == 0, let n = info.name { rendererName = String(cString: n) }
            // OpenGL on a software rasterizer (Mesa llvmpipe, as under Xvfb) is slower than SDL's own
            // software renderer, unless the user chose a driver (SDL_RENDER_DRIVER); and the software
            // renderer's window surface then goes to X by MIT-SHM (see
            // ``SDLVideoSystem/noteSoftwareOpenGL(_:)``). Measured per 640x360 frame under Xvfb:
            // OpenGL 3.7 ms, software through GL 2.1 ms, software to X 0.3 ms (present) + 0.2 ms (upload).
            if rendererName.hasPrefix("opengl") && !driverChosen,
               let gl = Self.glRendererString(),
               ["llvmpipe", "softpipe", "Software Rasterizer", "swrast"].contains(where: { gl.contains($0) }) {
                SDL_DestroyRenderer(renderer)
                system.noteSoftwareOpenGL(gl)
                renderer = SDL_CreateRenderer(window, -1, flags | SDL_RENDERER_SOFTWARE.rawValue)
                guard renderer != nil else { throw DisplayError.sdl(String(cString: SDL_GetError())) }
                rendererName = "software (OpenGL here is \(gl))"
            }
        }
        if rendererName.hasPrefix("software") && !driverChosen {
            SDL_DestroyRenderer(renderer)
            renderer = nil
            directSurface = true
            if attachSurfaceRenderer() {
                rendererName += ", pictures straight to the window surface"
            } else {
                directSurface = false
                renderer = SDL_CreateRenderer(window, -1, flags | SDL_RENDERER_SOFTWARE.rawValue)
                guard renderer != nil else { throw DisplayError.sdl(String(cString: SDL_GetError())) }
            }
        }
        if system.fontsAvailable { font = TTF_OpenFont(fontPath, 22) }
        redraw()
    }

    /// Direct mode: (re)creates the software renderer on the window's current surface (a resize
    /// replaces the surface). False when the surface is missing or not 32-bit RGB.
    private func attachSurfaceRenderer() -> Bool {
        guard let s = SDL_GetWindowSurface(window.pointer) else { return false }
        // A resize frees the old surface; the new one may even reuse its address, so the size
        // is compared too.
        let size = (Int(s.pointee.w), Int(s.pointee.h))
        if s == surface && renderer != nil && size == surfaceSize { return true }
        switch s.pointee.format.pointee.format {
        case SDL_PIXELFORMAT_RGB888.rawValue: surfaceFormat = AV_PIX_FMT_BGR0
        case SDL_PIXELFORMAT_ARGB8888.rawValue: surfaceFormat = AV_PIX_FMT_BGRA
        default: return false
        }
        if let renderer { SDL_DestroyRenderer(renderer) }
        renderer = SDL_CreateSoftwareRenderer(s)
        surface = s
        surfaceSize = size
        return renderer != nil
    }

    /// `glGetString(GL_RENDERER)` of the current context, through SDL (no GL link needed).
    private static func glRendererString() -> String? {
        guard let p = SDL_GL_GetProcAddress("glGetString") else { return nil }
        typealias GetString = @convention(c) (UInt32) -> UnsafePointer<UInt8>?
        let getString = unsafeBitCast(p, to: GetString.self)
        guard let s = getString(0x1F01) else { return nil }   // GL_RENDERER
        return String(cString: s)
    }

    // SDL clean-up on the main actor: inline when the last reference goes there (as in `play`);
    // queued to the main actor when it goes on another thread (a decoder that held the window for
    // wake()), where a process about to exit may never run it. The system, and so SDL_Quit, goes
    // after the window, since the window holds it.
    isolated deinit {
        if let texture { SDL_DestroyTexture(texture) }
        if let font { TTF_CloseFont(font) }
        if let renderer { SDL_DestroyRenderer(renderer) }
    }

    /// Wakes this window's ``waitEvent(timeoutMillis:)`` (now, or the next one if none is
    /// waiting): it returns ``Event/frameReady``. Other windows are not woken. Wakes before the
    /// wait returns count once. Safe from any thread; does not block beyond a short lock.
    public nonisolated func wake() {
        window.waker.wake()
    }

    /// This window's wake-up on its own, for other threads to keep: calling it is ``wake()``,
    /// and holding it does not keep the window alive (a window must be released on the main
    /// thread while its X server is up; a decode thread holding the window could release it last).
    public nonisolated var waker: WakeSignal { window.waker }

    /// The window's drawable size, pixels.
    public var outputSize: (width: Int, height: Int) { window.size }

    /// Sets the title bar text.
    /// - Parameter title: the new title.
    public func setTitle(_ title: String) { window.setTitle(title) }

    /// Shows a full-window status message (waiting, ended) in place of the picture, and redraws.
    /// - Parameter lines: the message, one entry per line.
    public func showMessage(_ lines: [String]) {
        message = lines
        hasPicture = false
        redraw()
    }

    private var progress: (fraction: Double, text: String)?

    /// Draws a ``TimeCode`` of the wall clock (µs since the epoch) across the bottom of the window
    /// at every redraw: a camera pointed at the screen, streamed back, shows when it looked.
    public var showClock = false

    private func drawClock(width: Int, y: Int) {
        let b = TimeCode.blockSize(width: width)
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        var bg = SDL_Rect(x: 0, y: Int32(y), w: Int32(width), h: Int32(2 * b))
        SDL_RenderFillRect(renderer, &bg)
        SDL_SetRenderDrawColor(renderer, 255, 255, 255, 255)
        for (i, bit) in TimeCode.bits(for: MonotonicClock.wallMicros()).enumerated() where bit {
            var r = SDL_Rect(x: Int32((i % TimeCode.blocksPerRow) * b), y: Int32(y + (i / TimeCode.blocksPerRow) * b),
                             w: Int32(b), h: Int32(b))
            SDL_RenderFillRect(renderer, &r)
        }
    }

    /// A progress bar with a line of text along the bottom (replay), drawn from the next redraw on.
    /// - Parameters:
    ///   - fraction: how far along, 0 to 1 (clamped).
    ///   - text: the line drawn on the bar.
    ///   - paused: a pause sign (two bars) before the text, else a play sign (a triangle): drawn
    ///     as shapes, not as glyphs a font may lack.
    public func setProgress(fraction: Double, text: String, paused: Bool) {
        progress = (max(0, min(1, fraction)), text)
        progressPaused = paused
    }
    private var progressPaused = false

    /// Small always-on tags at the picture's top right, below the rows a sender's time code may
    /// take: what the picture is (damaged: built on lost or concealed data) and what the feed
    /// does (recording). Drawn from the next redraw on.
    public var tags = Tags()

    /// The top-right tags.
    public struct Tags: Equatable, Sendable {
        /// The picture shown is damaged (red "DAMAGED").
        public var damaged = false
        /// What arrives is being recorded (red disc and "REC").
        public var recording = false
        public init(damaged: Bool = false, recording: Bool = false) {
            self.damaged = damaged
            self.recording = recording
        }
    }

    /// Draws the pause or play sign in a 16x16 box at (x, y).
    private func drawPlaySign(x: Int, y: Int, paused: Bool) {
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
        SDL_SetRenderDrawColor(renderer, 235, 235, 235, 255)
        if paused {
            for bx in [x + 2, x + 10] { var r = SDL_Rect(x: Int32(bx), y: Int32(y), w: 4, h: 16); SDL_RenderFillRect(renderer, &r) }
        } else {
            for dy in 0..<16 {
                let w = 14 - abs(dy - 8) * 14 / 8
                var r = SDL_Rect(x: Int32(x + 1), y: Int32(y + dy), w: Int32(max(1, w)), h: 1)
                SDL_RenderFillRect(renderer, &r)
            }
        }
    }

    /// The tags at the top right of `picture`, below the time-code rows.
    private func drawTags(in picture: SDL_Rect) {
        var y = Int(picture.y) + TimeCode.stripHeight(width: Int(picture.w)) + 6
        let right = Int(picture.x + picture.w) - 8
        for (on, text, tone) in [(tags.recording, "REC", OverlayLine.Tone.bad), (tags.damaged, "DAMAGED", .bad)] where on {
            let w = textWidth(text) + (text == "REC" ? 30 : 14)
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
            SDL_SetRenderDrawColor(renderer, 16, 16, 20, 255)
            var box = SDL_Rect(x: Int32(right - w), y: Int32(y), w: Int32(w), h: 30)
            SDL_RenderFillRect(renderer, &box)
            if text == "REC" {
                SDL_SetRenderDrawColor(renderer, 230, 40, 40, 255)
                for dy in -6...6 {
                    let half = Int(Double(36 - dy * dy).squareRoot())
                    var row = SDL_Rect(x: Int32(right - w + 14 - half), y: Int32(y + 15 + dy), w: Int32(2 * half + 1), h: 1)
                    SDL_RenderFillRect(renderer, &row)
                }
            }
            drawLines([OverlayLine(text, tone)], x: right - w + (text == "REC" ? 24 : 7), y: y + 2, box: false)
            y += 36
        }
    }

    /// The live overlay's sparkline (bars of glass-to-glass p99 a second, coloured against the
    /// target; a gap for a second without a figure), its bottom edge at `bottom`; returns its height.
    private func drawSparkline(bottom: Int) -> Int {
        guard let (history, target) = sparkline, history.values.contains(where: { $0 != nil }) else { return 0 }
        let h = 34, top = bottom - h, scale = history.scaleTop(targetMillis: target)
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
        SDL_SetRenderDrawColor(renderer, 16, 16, 20, 255)
        var box = SDL_Rect(x: 6, y: Int32(top), w: Int32(history.capacity * 8 + 8), h: Int32(h))
        SDL_RenderFillRect(renderer, &box)
        for (i, value) in history.values.enumerated() {
            guard let ms = value else { continue }
            let bar = max(1, Int(Double(h - 6) * ms / scale))
            let c = OverlayLine.Tone.of(millis: ms, target: target).rgb
            SDL_SetRenderDrawColor(renderer, c.r, c.g, c.b, 255)
            var r = SDL_Rect(x: Int32(10 + i * 8), y: Int32(bottom - 3 - bar), w: 6, h: Int32(bar))
            SDL_RenderFillRect(renderer, &r)
        }
        return h + 6
    }

    /// The feed's state badge (a coloured disc and words, as on the wall), drawn at the bottom
    /// left from the next redraw on; a badge that ``TileBadge/dimsPicture`` dims the picture.
    public var badge: TileBadge?

    /// Draws the badge with its bottom edge at `bottom`; returns the height it took.
    private func drawBadge(_ b: TileBadge, bottom: Int) -> Int {
        let h = 34, y = bottom - h
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_NONE)
        SDL_SetRenderDrawColor(renderer, 16, 16, 20, 255)
        var box = SDL_Rect(x: 6, y: Int32(y), w: 30, h: Int32(h))
        SDL_RenderFillRect(renderer, &box)
        SDL_SetRenderDrawColor(renderer, b.colour.r, b.colour.g, b.colour.b, 255)
        let radius = 8, cy = y + h / 2
        for dy in -radius...radius {
            let half = Int(Double(radius * radius - dy * dy).squareRoot())
            var row = SDL_Rect(x: Int32(21 - half), y: Int32(cy + dy), w: Int32(2 * half + 1), h: 1)
            SDL_RenderFillRect(renderer, &row)
        }
        drawText([b.text], x: 42, y: y + 3, box: true, opaque: true)
        return h + 6
    }

    /// Lines drawn over the picture's corner (stall state, counters) from the next redraw on.
    /// - Parameter lines: the lines; empty for none.
    public func setOverlay(_ lines: [String]) {
        overlay = lines.map { OverlayLine($0) }
        sparkline = nil
    }

    /// The live overlay (``FeedOverlay``): lines in their tones, and a sparkline above them.
    /// - Parameters:
    ///   - lines: the lines; empty for none.
    ///   - sparkline: glass-to-glass of the last seconds and the target, ms; nil for none.
    public func setOverlay(lines: [OverlayLine], sparkline: (history: GlassToGlassHistory, targetMillis: Double)?) {
        overlay = lines
        self.sparkline = sparkline
    }

    /// Waits for this window's next event: the window-system events addressed to this window (or
    /// to no window, like `SDL_QUIT`) first, then a ready frame (``wake()``)
    /// (``SDLWindow/wait(timeoutMillis:frameReady:translate:)``).
    /// - Parameter timeoutMillis: longest wait, ms (0 or less: only what is pending now).
    /// - Returns: the event, or nil on timeout.
    public func waitEvent(timeoutMillis: Int32) -> Event? {
        window.wait(timeoutMillis: Int(timeoutMillis), frameReady: .frameReady, translate: Self.translate)
    }

    private static func translate(_ e: SDL_Event) -> Event? {
        switch e.type {
        case SDL_QUIT.rawValue: return .quit
        case SDL_KEYDOWN.rawValue:
            switch Key(sdl: e.key.keysym.sym) {
            case .quit, .escape: return .quit
            case .fullscreen: return .toggleFullscreen
            case let key: return .key(key)
            }
        case SDL_WINDOWEVENT.rawValue:
            // With several windows SDL sends no SDL_QUIT until the last one closes.
            return e.window.event == UInt8(SDL_WINDOWEVENT_CLOSE.rawValue) ? .quit : .redraw
        default:
            return nil
        }
    }

    /// Resizes the window to `width`x`height`, scaled down to fit 90 % of the usable screen.
    /// - Parameters:
    ///   - width: wanted client width, pixels (at least 64 is kept).
    ///   - height: wanted client height, pixels (at least 64 is kept).
    public func fitWindow(width: Int, height: Int) { window.fit(width: width, height: height) }

    /// Switches between windowed and desktop fullscreen.
    public func toggleFullscreen() {
        window.toggleFullscreen()
        redraw()
    }

    /// Uploads `frame` and presents it. Returns after `SDL_RenderPresent` returns.
    /// - Parameter frame: the decoded picture; kept until the next one (redraws show it again).
    /// - Returns: false when the picture could not be shown (no texture that large); logged once.
    @discardableResult
    public func present(_ frame: DecodedFrame) -> Bool {
        if directSurface {
            lastFrame = frame
        } else {
            guard upload(frame) else { return false }
        }
        let (sn, sd) = frame.sampleAspectRatio
        lastAspect = Double(frame.width * sn) / Double(max(1, frame.height * sd))
        lastSize = (frame.width, frame.height)
        hasPicture = true
        redraw()
        return true
    }

    /// Redraws the current picture or message (after a resize or expose).
    public func redraw() {
        if directSurface && !attachSurfaceRenderer() {
            logDrawFailure("no window surface")
            return
        }
        var ow: Int32 = 0, oh: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &ow, &oh)
        // Clearing costs a pass over the whole window (0.1 ms at 720p in software): only when
        // letterbox bars (or no picture) will show.
        let bars = !hasPicture || showClock
            || placement(Int(ow), Int(oh)).destination != PixelRect(x: 0, y: 0, width: Int(ow), height: Int(oh))
        if bars {
            SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
            SDL_RenderClear(renderer)
        }
        if showClock {
            // The clock strip takes the bottom of the window; the picture gets the rest.
            let strip = Int32(TimeCode.stripHeight(width: Int(ow)))
            drawClock(width: Int(ow), y: Int(oh - strip))
            oh -= strip
        }
        if hasPicture, directSurface ? lastFrame != nil : texture != nil {
            let dst = drawPicture(width: Int(ow), height: Int(oh))
            drawAroundPicture(dst, width: Int(ow), height: Int(oh))
        } else {
            SDL_SetRenderDrawColor(renderer, 32, 36, 44, 255)
            SDL_RenderClear(renderer)
            drawText(message, x: 24, y: Int(oh) / 2 - 30 * message.count / 2, box: false)
            if let badge { _ = drawBadge(badge, bottom: Int(oh) - 6) }
        }
        if captureReadback && hasPicture { readBack(Int(ow), Int(oh)) }
        if let path = pendingScreenshot {
            pendingScreenshot = nil
            screenshotResult = startPNG(width: Int(ow), height: Int(oh), path: path)
        }
        SDL_RenderPresent(renderer)   // direct mode: draws what is batched on the surface
        if directSurface { SDL_UpdateWindowSurface(window.pointer) }
    }

    /// Draws the picture placed by the gravity in a `width` x `height` area (dimmed when its badge
    /// says it is frozen or finished); returns where it went.
    private func drawPicture(width: Int, height: Int) -> SDL_Rect {
        let place = placement(width, height)
        var dst = SDL_Rect(x: Int32(place.destination.x), y: Int32(place.destination.y),
                           w: Int32(place.destination.width), h: Int32(place.destination.height))
        if directSurface, let frame = lastFrame, let surface {
            drawDirect(frame, into: surface, rect: dst, source: place.source)
        } else {
            var src = SDL_Rect(x: Int32(place.source.x), y: Int32(place.source.y),
                               w: Int32(place.source.width), h: Int32(place.source.height))
            SDL_RenderCopy(renderer, texture, &src, &dst)
        }
        if badge?.dimsPicture == true {
            // A frozen or finished picture must not look live: a quarter of its brightness.
            SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
            SDL_SetRenderDrawColor(renderer, 0, 0, 0, 192)
            SDL_RenderFillRect(renderer, &dst)
        }
        return dst
    }

    /// The badge, the overlay and its sparkline, the tags and the progress bar around the picture
    /// at `dst`. Bottom left, above the picture's bottom rows: the top and bottom rows may carry a
    /// time code that an observer reads.
    private func drawAroundPicture(_ dst: SDL_Rect, width: Int, height: Int) {
        var bar = progress != nil ? 34 : 0
        if let badge { bar += drawBadge(badge, bottom: height - 6 - bar) }
        if !overlay.isEmpty {
            let codeRows = TimeCode.stripHeight(width: Int(dst.w))
            let bottom = min(height - 8 - bar, Int(dst.y + dst.h) - codeRows - 6)
            let top = bottom - 36 * overlay.count
            drawLines(overlay, x: 12, y: top, box: true)
            _ = drawSparkline(bottom: top - 6)
        }
        drawTags(in: dst)
        if let progress { drawProgress(progress, width: width, height: height) }
    }

    /// The replay bar along the bottom: how far along, the play or pause sign, and its line.
    private func drawProgress(_ progress: (fraction: Double, text: String), width: Int, height: Int) {
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 170)
        var bg = SDL_Rect(x: 0, y: Int32(height - 30), w: Int32(width), h: 30)
        SDL_RenderFillRect(renderer, &bg)
        SDL_SetRenderDrawColor(renderer, 80, 160, 255, 220)
        var fill = SDL_Rect(x: 0, y: Int32(height - 4), w: Int32(Double(width) * progress.fraction), h: 4)
        SDL_RenderFillRect(renderer, &fill)
        drawPlaySign(x: 10, y: height - 23, paused: progressPaused)
        drawText([progress.text], x: 34, y: height - 30, box: false)
    }

    /// Direct mode: libswscale writes the picture into the surface's rectangle `rect`.
    /// Where the picture goes in a `width` x `height` window under the gravity, and which part of it.
    private func placement(_ width: Int, _ height: Int) -> Gravity.Placement {
        gravity.placement(width: lastSize.width, height: lastSize.height, aspect: lastAspect,
                          in: PixelRect(x: 0, y: 0, width: width, height: height))
    }

    private func drawDirect(_ frame: DecodedFrame, into surface: UnsafeMutablePointer<SDL_Surface>, rect: SDL_Rect, source: PixelRect) {
        SDL_RenderFlush(renderer)   // the clear (batched) must land before the picture
        let lock = (surface.pointee.flags & UInt32(SDL_RLEACCEL)) != 0
        if lock { SDL_LockSurface(surface) }
        defer { if lock { SDL_UnlockSurface(surface) } }
        guard let pixels = surface.pointee.pixels, rect.w > 0, rect.h > 0 else { return }
        let pitch = Int(surface.pointee.pitch)
        let origin = pixels + Int(rect.y) * pitch + Int(rect.x) * 4
        if !converter.convert(frame.picture, into: origin, pitch: pitch, width: Int(rect.w), height: Int(rect.h), format: surfaceFormat, source: source) {
            logDrawFailure("libswscale cannot convert \(frame.width)x\(frame.height) \(String(cString: av_get_pix_fmt_name(frame.pixelFormat)))")
        }
    }

    private func logDrawFailure(_ why: String) {
        guard !textureFailureLogged else { return }
        Log.error("cannot show pictures: \(why)")
        textureFailureLogged = true
    }

    private var pendingScreenshot: String?
    private var screenshotResult: Result<PNGJob, PNGJob.ScreenshotError>?

    /// `p`: the window as drawn now, copied and written as a PNG (SDL2_image) at `path` on a
    /// thread of its own (``PNGJob``), so that the live picture goes on meanwhile.
    /// - Returns: the write under way (``PNGJob/wait()`` to wait for the file).
    /// - Throws: ``PNGJob/ScreenshotError`` when the window could not be read back.
    public func screenshot(path: String) throws -> PNGJob {
        pendingScreenshot = path
        screenshotResult = nil
        redraw()
        return try (screenshotResult ?? .failure(PNGJob.ScreenshotError(description: "\(path): no picture drawn"))).get()
    }

    /// Reads the drawn window back (before it is presented) and starts writing it as a PNG.
    private func startPNG(width w: Int, height h: Int, path: String) -> Result<PNGJob, PNGJob.ScreenshotError> {
        guard w > 0, h > 0 else { return .failure(PNGJob.ScreenshotError(description: "\(path): the window has no size")) }
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        let rc = rgb.withUnsafeMutableBytes {
            SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_RGB24.rawValue, $0.baseAddress, Int32(w * 3))
        }
        guard rc == 0 else { return .failure(PNGJob.ScreenshotError(description: "\(path): \(String(cString: SDL_GetError()))")) }
        return .success(PNGJob(rgb: rgb, width: w, height: h, path: path))
    }

    private func readBack(_ w: Int, _ h: Int) {
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        let rc = rgb.withUnsafeMutableBytes {
            SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_RGB24.rawValue, $0.baseAddress, Int32(w * 3))
        }
        if rc == 0 { lastReadback = (w, h, rgb) }
    }

    // MARK: - upload

    /// SDL's YUV conversion mode for a frame, or nil when SDL cannot show it right.
    nonisolated static func sdlYUVMode(for frame: DecodedFrame) -> SDL_YUV_CONVERSION_MODE? {
        let fmt = frame.pixelFormat
        guard fmt == AV_PIX_FMT_YUV420P || fmt == AV_PIX_FMT_YUVJ420P else { return nil }
        let full = frame.isFullRange
        let bt709: Bool
        switch frame.colorSpace {
        case AVCOL_SPC_BT709: bt709 = true
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC: bt709 = false
        // Unspecified: BT.601, as libswscale (and so ffmpeg) assumes; ffmpeg-made streams are 601.
        case AVCOL_SPC_UNSPECIFIED, AVCOL_SPC_RESERVED: bt709 = false
        default: return nil
        }
        switch (bt709, full) {
        case (false, false): return SDL_YUV_CONVERSION_BT601
        case (false, true): return SDL_YUV_CONVERSION_JPEG
        case (true, false): return SDL_YUV_CONVERSION_BT709
        case (true, true): return nil  // SDL2 has no BT.709 full-range mode
        }
    }

    private var textureFailureLogged = false

    private func upload(_ frame: DecodedFrame) -> Bool {
        let f = frame.frame
        let mode = Self.sdlYUVMode(for: frame)
        let key = TextureKey(width: f.pointee.width, height: f.pointee.height, format: f.pointee.format,
                             yuvMode: mode.map { Int($0.rawValue) } ?? -1)
        if key != textureKey {
            if let texture { SDL_DestroyTexture(texture) }
            if let mode { SDL_SetYUVConversionMode(mode) }
            let pixfmt = mode != nil ? SDL_PIXELFORMAT_IYUV.rawValue : SDL_PIXELFORMAT_ARGB8888.rawValue
            texture = SDL_CreateTexture(renderer, pixfmt, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
                                        f.pointee.width, f.pointee.height)
            if mode == nil, let texture { SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_NONE) }   // opaque: a plain copy
            textureKey = key
        }
        guard let texture else {
            if !textureFailureLogged {
                Log.error("cannot show \(frame.width)x\(frame.height) pictures: \(String(cString: SDL_GetError()))")
                textureFailureLogged = true
            }
            return false
        }
        if mode != nil {
            SDL_UpdateYUVTexture(texture, nil,
                                 f.pointee.data.0, f.pointee.linesize.0,
                                 f.pointee.data.1, f.pointee.linesize.1,
                                 f.pointee.data.2, f.pointee.linesize.2)
        } else {
            var pixels: UnsafeMutableRawPointer?
            var pitch: Int32 = 0
            guard SDL_LockTexture(texture, nil, &pixels, &pitch) == 0, let pixels else { return false }
            let ok = converter.convert(frame.picture, into: pixels, pitch: Int(pitch), width: frame.width, height: frame.height,
                                       format: AV_PIX_FMT_BGRA)
            SDL_UnlockTexture(texture)
            guard ok else { return false }
        }
        return true
    }

    // MARK: - text

    /// `box` puts each line on a dark box (`opaque`: a solid one, for the badge).
    private func drawText(_ lines: [String], x: Int, y: Int, box: Bool, opaque: Bool = false) {
        drawLines(lines.map { OverlayLine($0) }, x: x, y: y, box: box, opaque: opaque)
    }

    /// The width of `text` in the window's font, pixels (0 without a font).
    private func textWidth(_ text: String) -> Int {
        guard let font else { return 0 }
        var w: Int32 = 0, h: Int32 = 0
        TTF_SizeUTF8(font, text, &w, &h)
        return Int(w)
    }

    /// Lines in their tones' colours; `box` puts each on a dark box (`opaque`: a solid one). The
    /// box is dark enough (80 %) for light text to read over bright pictures.
    private func drawLines(_ lines: [OverlayLine], x: Int, y: Int, box: Bool, opaque: Bool = false) {
        guard let font else { return }
        var yy = y
        for entry in lines where !entry.text.isEmpty {
            let line = entry.text, c = entry.tone.rgb
            guard let surface = TTF_RenderUTF8_Blended(font, line, SDL_Color(r: c.r, g: c.g, b: c.b, a: 255)) else { continue }
            defer { SDL_FreeSurface(surface) }
            guard let tex = SDL_CreateTextureFromSurface(renderer, surface) else { continue }
            defer { SDL_DestroyTexture(tex) }
            var r = SDL_Rect(x: Int32(x), y: Int32(yy), w: surface.pointee.w, h: surface.pointee.h)
            if box {
                SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
                SDL_SetRenderDrawColor(renderer, opaque ? 16 : 0, opaque ? 16 : 0, opaque ? 20 : 0, opaque ? 255 : 205)
                var bg = SDL_Rect(x: r.x - 6, y: r.y - 2, w: r.w + 12, h: r.h + 4)
                SDL_RenderFillRect(renderer, &bg)
            }
            SDL_RenderCopy(renderer, tex, nil, &r)
            yy += Int(surface.pointee.h) + 6
        }
    }
}
