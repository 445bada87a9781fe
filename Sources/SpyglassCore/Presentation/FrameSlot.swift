import Foundation

/// The hand-off from the decode thread to the display: one slot, newest frame wins.
///
/// A live receiver must never queue pictures behind the one it could show now: when a new
/// frame arrives before the display took the last one, the older one is dropped and counted
/// (``dropped``). The display takes at most one frame per wake-up.
public final class FrameSlot: @unchecked Sendable {
    private var frame: DecodedFrame?
    private var closed = false
    private var _dropped = 0
    private let condition = NSCondition()

    public init() {}

    /// Frames replaced before the display took them.
    public var dropped: Int { condition.lock(); defer { condition.unlock() }; return _dropped }

    /// Puts a frame in the slot, dropping (and counting) one not yet taken.
    /// - Returns: the frame that was dropped, if any (so its drop can be logged).
    @discardableResult
    public func put(_ f: DecodedFrame) -> DecodedFrame? {
        condition.lock()
        let old = frame
        frame = f
        if old != nil { _dropped += 1 }
        condition.signal()
        condition.unlock()
        return old
    }

    /// Takes the frame, if any, without waiting.
    public func take() -> DecodedFrame? {
        condition.lock(); defer { condition.unlock() }
        let f = frame
        frame = nil
        return f
    }

    /// Waits up to `timeoutMicros` for a frame (or ``close()``).
    public func wait(timeoutMicros: Int) -> DecodedFrame? {
        condition.lock(); defer { condition.unlock() }
        if frame == nil && !closed {
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(timeoutMicros) / 1e6))
        }
        let f = frame
        frame = nil
        return f
    }

    /// Marks the end of input; waiters return.
    public func close() {
        condition.lock(); closed = true; condition.broadcast(); condition.unlock()
    }

    /// True after ``close()``.
    public var isClosed: Bool { condition.lock(); defer { condition.unlock() }; return closed }
}
