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

/// A value shared between threads, behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: Value) { lock.lock(); value = v; lock.unlock() }
    func mutate(_ f: (inout Value) -> Void) { lock.lock(); f(&value); lock.unlock() }
}
