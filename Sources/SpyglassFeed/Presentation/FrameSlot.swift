import Synchronization

/// The hand-off from a feed's thread to the display: one slot, newest frame wins.
///
/// A live receiver must never queue pictures behind the one it could show now: when a new
/// frame arrives before the display took the last one, the older one is returned to the caller,
/// which counts and logs it as dropped. The display takes at most one frame per wake-up.
public final class FrameSlot: Sendable {
    private struct State {
        var frame: DecodedFrame?
        var closed = false
        var dropped = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Puts a frame in the slot, replacing one not yet taken.
    /// - Returns: the frame that was replaced, if any (so its drop can be counted and logged).
    @discardableResult
    public func put(_ f: DecodedFrame) -> DecodedFrame? {
        state.withLock { s in
            let old = s.frame
            s.frame = f
            if old != nil { s.dropped += 1 }
            return old
        }
    }

    /// Takes the frame, if any, without waiting.
    public func take() -> DecodedFrame? {
        state.withLock { s in
            let f = s.frame
            s.frame = nil
            return f
        }
    }

    /// Frames replaced before the display took them.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// True when a frame waits to be taken.
    public var hasFrame: Bool { state.withLock { $0.frame != nil } }

    /// Marks the end of input.
    public func close() { state.withLock { $0.closed = true } }

    /// True after ``close()``.
    public var isClosed: Bool { state.withLock { $0.closed } }
}
