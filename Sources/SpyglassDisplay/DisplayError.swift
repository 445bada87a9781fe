/// Errors starting SDL or opening the window.
public enum DisplayError: Error, CustomStringConvertible, Sendable {
    /// SDL failed; the text is `SDL_GetError()`.
    case sdl(String)
    /// "SDL: " and SDL's error text.
    public var description: String {
        switch self { case .sdl(let s): return "SDL: \(s)" }
    }
}
