import CSDL2
import Foundation

/// SDL's video subsystem for the whole process: one per process, shared by every window.
///
/// Create it once, on the main thread, before the first window, and pass it to each window
/// (``WallWindow/init(system:feeds:settings:)``). It sets SDL's
/// process-wide hints, calls `SDL_Init(SDL_INIT_VIDEO)` and `TTF_Init` once, and calls
/// `TTF_Quit` and `SDL_Quit` when it goes away: after the last window, since every window keeps
/// it alive.
///
/// It owns the event pump. SDL has one event queue per process; ``pumpEvents()`` empties it and
/// hands each event to the window it names (by `SDL_GetWindowID`). Events that name no window
/// (`SDL_QUIT`, display and device events) go to every window. A window's
/// ``SDLWindow/wait(timeoutMillis:frameReady:translate:)`` pumps, so one window waiting keeps all queues fed.
@MainActor
public final class SDLVideoSystem {
    /// The windows, by SDL window id (weakly: a closed window drops out; ids are not reused).
    private var windows: [UInt32: WeakDisplay] = [:]
    /// `TTF_Init` succeeded: windows may open fonts.
    let fontsAvailable: Bool

    private struct WeakDisplay {
        weak var display: SDLWindow?
    }

    /// Sets the process-wide hints and initializes SDL video and SDL_ttf.
    ///
    /// Call once per process, on the main thread, before creating any window.
    /// - Throws: ``DisplayError/sdl(_:)`` when SDL's video subsystem cannot start
    ///   (no display server and no usable video driver). Fonts failing is not an error: windows
    ///   then draw no text.
    public init() throws {
        // Read when a window is created: keep the compositor out of the path (latency).
        SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "1")
        // Windows are drawn through their surface, with no renderer. SDL 2.26 would push the
        // surface through a renderer texture ("framebuffer acceleration"; OpenGL on llvmpipe under
        // Xvfb) and upload the whole window for every rectangle; X11's own framebuffer sends just
        // the rectangles by MIT-SHM. Measured with tools/wall-bench, 4 feeds into 960x540 tiles:
        // 14.1 CPU-seconds per 10 s with it (docs/benchmarks/ for without). Unless the user set it.
        if ProcessInfo.processInfo.environment["SDL_FRAMEBUFFER_ACCELERATION"] == nil {
            SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        }
        Self.useUTF8CharacterType()
        guard SDL_Init(SDL_INIT_VIDEO) == 0 else {
            throw DisplayError.sdl(String(cString: SDL_GetError()))
        }
        fontsAvailable = TTF_Init() == 0
    }

    /// Window titles are UTF-8. SDL's X11 driver converts a title through the C library's
    /// character type (`XmbTextListToTextProperty`) before it sets `_NET_WM_NAME`: in the "C"
    /// locale a Swift program starts in, "—" made a Latin-1-garbled WM_NAME and no `_NET_WM_NAME`
    /// at all (read with `xprop`). The environment's character type is used when it is UTF-8,
    /// else C.UTF-8; only LC_CTYPE changes (numbers still print with a point).
    private static func useUTF8CharacterType() {
        if let set = setlocale(LC_CTYPE, ""), String(cString: set).lowercased().replacingOccurrences(of: "-", with: "").contains("utf8") { return }
        setlocale(LC_CTYPE, "C.UTF-8")
    }

    isolated deinit {
        if fontsAvailable { TTF_Quit() }
        SDL_Quit()
    }

    /// Routes events for the window `windowID` to `display` from now on.
    func register(_ display: SDLWindow, windowID: UInt32) {
        windows[windowID] = WeakDisplay(display: display)
    }

    /// Moves every event waiting in SDL's queue to the queue of the window it belongs to; an
    /// event that names no window goes to every window. Events for a window that is gone are
    /// dropped. Call on the main thread; ``SDLWindow/wait(timeoutMillis:frameReady:translate:)`` calls it.
    public func pumpEvents() {
        var e = SDL_Event()
        while SDL_PollEvent(&e) == 1 {
            let id = Self.windowID(of: e)
            if id != 0 {
                windows[id]?.display?.deliver(e)
            } else {
                windows = windows.filter { $0.value.display != nil }
                for entry in windows.values { entry.display?.deliver(e) }
            }
        }
    }

    /// The id of the window an event is addressed to; 0 when it names none.
    static func windowID(of e: SDL_Event) -> UInt32 {
        switch SDL_EventType(e.type) {
        case SDL_WINDOWEVENT: return e.window.windowID
        case SDL_KEYDOWN, SDL_KEYUP: return e.key.windowID
        case SDL_TEXTEDITING: return e.edit.windowID
        case SDL_TEXTINPUT: return e.text.windowID
        case SDL_MOUSEMOTION: return e.motion.windowID
        case SDL_MOUSEBUTTONDOWN, SDL_MOUSEBUTTONUP: return e.button.windowID
        case SDL_MOUSEWHEEL: return e.wheel.windowID
        case SDL_DROPFILE, SDL_DROPTEXT, SDL_DROPBEGIN, SDL_DROPCOMPLETE: return e.drop.windowID
        default:
            return e.type >= SDL_USEREVENT.rawValue && e.type < SDL_LASTEVENT.rawValue ? e.user.windowID : 0
        }
    }
}
