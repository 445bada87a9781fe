/// The keys Spyglass answers: one map, for the single window and the wall alike, from SDL key
/// codes (`SDL_Keycode`: ASCII for printable keys, 27 Esc, 9 Tab, the scancode | 1 << 30 for
/// arrows). What a key does in each place is the window's to decide; what a key *is* is said
/// here only.
public enum Key: Equatable, Hashable, Sendable {
    /// `q`: quit.
    case quit
    /// Esc: back to the wall from a focused feed, else quit.
    case escape
    /// `f`: fullscreen on and off.
    case fullscreen
    /// `p`: a PNG screenshot.
    case screenshot
    /// `a`: the next gravity (letterbox, fill, stretch).
    case gravity
    /// `i`: the last second's numbers.
    case lastSecond
    /// `s`: the link's statistics.
    case linkStatistics
    /// `o`: the aircraft's OSD (MAVLink telemetry) on and off.
    case osd
    /// `b`: a bug bundle of what arrived last (`--bundle`).
    case bundle
    /// Tab: focus the next feed.
    case nextFeed
    /// `1`–`9`: focus feed 1–9 (index 0–8), or back to the wall.
    case feed(Int)
    /// Space: pause or play a replay.
    case pause
    /// `.`: one access unit of a paused replay.
    case step
    /// ←/→: seek a replay 5 s back or forward.
    case seekBack, seekForward
    /// `[` / `]`: replay at half or twice the speed.
    case slower, faster
    /// A key Spyglass does not use, as its SDL key code.
    case other(Int32)

    private static let arrowLeft = Int32(bitPattern: 0x4000_0050), arrowRight = Int32(bitPattern: 0x4000_004F)
    private static let letters: [UInt8: Key] = [
        UInt8(ascii: "q"): .quit, UInt8(ascii: "f"): .fullscreen, UInt8(ascii: "p"): .screenshot,
        UInt8(ascii: "a"): .gravity, UInt8(ascii: "i"): .lastSecond, UInt8(ascii: "s"): .linkStatistics, UInt8(ascii: "o"): .osd, UInt8(ascii: "b"): .bundle,
        27: .escape, 9: .nextFeed, UInt8(ascii: " "): .pause, UInt8(ascii: "."): .step,
        UInt8(ascii: "["): .slower, UInt8(ascii: "]"): .faster,
    ]

    /// The key an SDL key code is.
    public init(sdl code: Int32) {
        switch code {
        case Int32(UInt8(ascii: "1"))...Int32(UInt8(ascii: "9")): self = .feed(Int(code) - Int(UInt8(ascii: "1")))
        case Self.arrowLeft: self = .seekBack
        case Self.arrowRight: self = .seekForward
        case 0...127: self = Self.letters[UInt8(code)] ?? .other(code)
        default: self = .other(code)
        }
    }

    /// Its SDL key code (what a test pushes as an event).
    public var sdlCode: Int32 {
        switch self {
        case .feed(let i): return Int32(UInt8(ascii: "1")) + Int32(i)
        case .seekBack: return Self.arrowLeft
        case .seekForward: return Self.arrowRight
        case .other(let code): return code
        default: return Int32(Self.letters.first { $0.value == self }?.key ?? 0)
        }
    }
}
