import SpyglassFeed
/// What a tile says about its feed, always: the seeds' player states as a badge.
public enum TileBadge: Equatable, Sendable {
    /// Started, no byte yet.
    case waitingForData
    /// Nothing accepted yet, but this many datagrams (or senders) were refused by `--allow-from`:
    /// data arrives, from elsewhere. Never "waiting for data" while data arrives.
    case refusing(Int)
    /// Bytes arrive, no picture yet (parameter sets, a keyframe).
    case waitingForPicture
    /// Pictures arrive.
    case live
    /// Pictures of a file or pipe arrive at its own pace (never called stalled).
    case playing
    /// A live feed whose last picture is older than the stall time; its age, seconds.
    case stalled(ageSeconds: Double)
    /// The source has not reached its sender (a camera that is down), and why.
    case connecting(String)
    /// The sender went away; waiting for it (or the next one).
    case reconnecting
    /// The input ended.
    case ended
    /// The feed cannot go on, and why (one line).
    case failed(String)

    /// The badge for a feed now.
    /// - Parameters:
    ///   - state: the pipeline's state.
    ///   - lastPictureMicros: when its last picture was shown (monotonic µs); nil before the first.
    ///   - nowMicros: now, monotonic µs.
    ///   - stallMicros: a live feed with no picture for this long is stalled.
    ///   - live: the source delivers in real time (a file that ends is not "stalled").
    ///   - refused: datagrams or senders `--allow-from` refused so far (read only while waiting for
    ///     data: the wall asks for every tile on every picture).
    public static func of(state: PipelineState, lastPictureMicros: UInt64?, nowMicros: UInt64,
                          stallMicros: UInt64, live: Bool, refused: @autoclosure () -> Int = 0) -> TileBadge {
        switch state {
        case .failed(let why): return .failed(why)
        case .ended: return .ended
        case .reconnecting: return .reconnecting
        case .connecting(let why): return .connecting(why)
        case .waitingForData where lastPictureMicros == nil:
            let n = refused()
            return n > 0 ? .refusing(n) : .waitingForData
        default: break
        }
        guard let last = lastPictureMicros else { return .waitingForPicture }
        guard live else { return .playing }
        let age = nowMicros > last ? nowMicros - last : 0
        return age >= stallMicros ? .stalled(ageSeconds: Double(age) / 1e6) : .live
    }

    /// The badge's words ("stalled 2.4 s", "failed: port in use").
    public var text: String {
        switch self {
        case .waitingForData: return "waiting for data"
        case .refusing(let n): return "refusing \(n) datagrams from senders --allow-from does not allow"
        case .waitingForPicture: return "waiting for a keyframe"
        case .live: return "live"
        case .playing: return "playing"
        case .stalled(let age): return String(format: "stalled %.1f s", age)
        case .connecting(let why): return "connecting: \(why)"
        case .reconnecting: return "reconnecting"
        case .ended: return "ended"
        case .failed(let why): return "failed: \(why)"
        }
    }

    /// The state in a word or two, without ages or reasons (the window title).
    public var word: String {
        switch self {
        case .stalled: return "stalled"
        case .failed: return "failed"
        case .connecting: return "connecting"
        case .refusing: return "refusing"
        default: return text
        }
    }

    /// The badge's colour, 8-bit RGB: green live or playing, amber waiting, red stalled or failed, blue
    /// reconnecting, grey ended.
    public var colour: (r: UInt8, g: UInt8, b: UInt8) {
        switch self {
        case .live, .playing: return (40, 200, 80)
        case .waitingForData, .waitingForPicture, .refusing: return (240, 170, 20)
        case .stalled, .failed: return (230, 40, 40)
        case .reconnecting, .connecting: return (60, 140, 250)
        case .ended: return (150, 150, 150)
        }
    }

    /// A frozen or finished picture is dimmed, so that it never looks live.
    public var dimsPicture: Bool {
        switch self {
        case .stalled, .ended, .failed, .reconnecting, .connecting: return true
        default: return false
        }
    }

    /// The badge changes what is drawn (a stall's age counts in tenths of a second).
    func drawsDifferently(from other: TileBadge) -> Bool { text != other.text }
}
