import CSDL2

/// What the wall window is asked to do, from SDL's events (or a test pushing them).
public enum WallInput: Equatable, Sendable {
    /// The window was closed, or SDL_QUIT.
    case quit
    /// A key (``Key``).
    case key(Key)
    /// A left click at a window point, pixels.
    case click(x: Int, y: Int)
    /// Exposed or resized: draw every visible tile again.
    case redraw
    /// A feed has a new picture.
    case frameReady

    /// The input an SDL event means; nil for events the wall ignores.
    init?(_ e: SDL_Event) {
        switch e.type {
        case SDL_QUIT.rawValue: self = .quit
        case SDL_KEYDOWN.rawValue: self = .key(Key(sdl: e.key.keysym.sym))
        case SDL_MOUSEBUTTONDOWN.rawValue where e.button.button == UInt8(SDL_BUTTON_LEFT):
            self = .click(x: Int(e.button.x), y: Int(e.button.y))
        case SDL_WINDOWEVENT.rawValue:
            // With several windows SDL sends no SDL_QUIT until the last one closes.
            self = e.window.event == UInt8(SDL_WINDOWEVENT_CLOSE.rawValue) ? .quit : .redraw
        default: return nil
        }
    }
}
