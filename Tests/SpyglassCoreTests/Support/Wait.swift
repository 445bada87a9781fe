import Synchronization
import Foundation

/// Waiting for an event instead of sleeping a guessed time: poll a condition every few
/// milliseconds up to a generous deadline, and let the caller fail with a message when it passes.
/// (A sleep that paces a sender on purpose, to simulate a link, is not a wait: say so where it is.)
enum Wait {
    /// Polls `condition` every `pollMillis` ms until it holds or `timeoutSeconds` have passed.
    /// - Returns: true if the condition held in time.
    @discardableResult
    static func until(timeoutSeconds: Double = 10, pollMillis: Int = 5, _ condition: () -> Bool) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutSeconds * 1e9)
        while true {
            if condition() { return true }
            if DispatchTime.now().uptimeNanoseconds >= deadline { return false }
            usleep(UInt32(pollMillis * 1000))
        }
    }
}

/// A value shared between threads, behind a `Mutex`.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func get() -> Value { value.withLock { $0 } }
    func set(_ v: Value) { value.withLock { $0 = v } }
    func mutate(_ f: (inout Value) -> Void) { value.withLock { f(&$0) } }
}
