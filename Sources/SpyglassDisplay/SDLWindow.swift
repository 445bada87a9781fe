import CSDL2
import SpyglassPipeline

/// The one SDL window type: what every window of Spyglass shares, whatever draws into it.
///
/// It creates the window (the only `SDL_CreateWindow` in Spyglass), registers it with the
/// ``SDLVideoSystem`` so that the events addressed to it are queued here, keeps its wake-up, and
/// waits for either. The window's ``WallSurface`` (tiles drawn straight into the window surface)
/// owns it.
///
/// Main thread only, except ``waker``. The window is destroyed with this object, after whatever
/// owns it has let go of its surface.
@MainActor
final class SDLWindow {
    /// The video system this window belongs to (kept alive by the window).
    let system: SDLVideoSystem
    /// The SDL window.
    let pointer: OpaquePointer
    /// SDL's id of the window (`SDL_GetWindowID`): the `windowID` that SDL events addressed to it carry.
    let id: UInt32
    /// Events the system routed to this window, oldest first, not yet returned.
    private var routed: [SDL_Event] = []
    /// At most this many routed events are kept for a window nobody waits on (the oldest go).
    static let routedLimit = 256
    /// How often a waiting window looks at keyboard and window events, ms.
    nonisolated static let inputPollMillis = 4
    private nonisolated let wakeSignal = WakeSignal()
    /// The user placed the window (`--window-pos`): a fit keeps its corner there.
    private let placed: Bool

    /// Opens a resizable window.
    /// - Parameters:
    ///   - system: the process's video system; the window keeps it alive.
    ///   - title: UTF-8 title.
    ///   - width, height: client size, pixels.
    ///   - position: top-left corner on the screen, pixels (nil: the window system chooses).
    /// - Throws: ``DisplayError/sdl(_:)`` with `SDL_GetError()` when SDL cannot open it.
    init(system: SDLVideoSystem, title: String, width: Int, height: Int, position: (x: Int, y: Int)?) throws {
        self.system = system
        placed = position != nil
        guard let w = SDL_CreateWindow(title, position.map { Int32($0.x) } ?? spy_sdl_windowpos_undefined(),
                                       position.map { Int32($0.y) } ?? spy_sdl_windowpos_undefined(),
                                       Int32(width), Int32(height), SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_SHOWN.rawValue)
        else { throw DisplayError.sdl(String(cString: SDL_GetError())) }
        pointer = w
        id = SDL_GetWindowID(w)
        system.register(self, windowID: id)
    }

    // On the main actor: inline when the last reference goes there; queued to it otherwise.
    isolated deinit {
        SDL_DestroyWindow(pointer)
    }

    /// Wakes ``wait(timeoutMillis:)`` from any thread, without holding the window (a window must
    /// be released on the main thread while its X server is up).
    nonisolated var waker: WakeSignal { wakeSignal }

    /// Waits up to `timeoutMillis` for input. The events routed here come first (a feed that
    /// always has a picture ready must not keep a key waiting), then a wake-up; events are polled
    /// every ``inputPollMillis`` while it sleeps on the wake-up.
    /// - Parameters:
    ///   - timeoutMillis: longest wait, ms (0 or less: only what is pending now).
    ///   - frameReady: what a wake-up (a picture is ready) returns.
    ///   - translate: what an SDL event means to the window's owner; nil: nothing (it is skipped).
    /// - Returns: the input, or nil on timeout.
    func wait<Input>(timeoutMillis: Int, frameReady: Input, translate: (SDL_Event) -> Input?) -> Input? {
        let deadline = MonotonicClock.nowMicros() + UInt64(max(0, timeoutMillis)) * 1000
        while true {
            system.pumpEvents()
            while !routed.isEmpty {
                if let input = translate(routed.removeFirst()) { return input }
            }
            if wakeSignal.take(waitingUpTo: 0) { return frameReady }
            let now = MonotonicClock.nowMicros()
            guard now < deadline else { return nil }
            if wakeSignal.take(waitingUpTo: min(Int(deadline - now), Self.inputPollMillis * 1000)) { return frameReady }
        }
    }

    /// Queues an event the system routed to this window; the oldest goes past ``routedLimit``.
    func deliver(_ e: SDL_Event) {
        if routed.count >= Self.routedLimit { routed.removeFirst() }
        routed.append(e)
    }

    /// The window's size, pixels.
    var size: (width: Int, height: Int) {
        var w: Int32 = 0, h: Int32 = 0
        SDL_GetWindowSize(pointer, &w, &h)
        return (Int(w), Int(h))
    }

    /// Sets the title (UTF-8; SDL sets `_NET_WM_NAME` on X11).
    func setTitle(_ title: String) { SDL_SetWindowTitle(pointer, title) }

    /// Switches between windowed and desktop fullscreen.
    func toggleFullscreen() {
        let full = SDL_GetWindowFlags(pointer) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue != 0
        SDL_SetWindowFullscreen(pointer, full ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue)
    }

    /// Resizes the window to `width`x`height`, scaled down to fit 90 % of the usable screen (at
    /// least 64 pixels each way), and centres it on the screen unless the user placed it.
    func fit(width: Int, height: Int) {
        var bounds = SDL_Rect()
        var w = width, h = height
        if SDL_GetDisplayUsableBounds(0, &bounds) == 0 && bounds.w > 0 && bounds.h > 0 {
            let scale = min(1.0, 0.9 * Double(bounds.w) / Double(w), 0.9 * Double(bounds.h) / Double(h))
            w = Int(Double(w) * scale); h = Int(Double(h) * scale)
        }
        SDL_SetWindowSize(pointer, Int32(max(64, w)), Int32(max(64, h)))
        if !placed { SDL_SetWindowPosition(pointer, spy_sdl_windowpos_centered(), spy_sdl_windowpos_centered()) }
    }
}
