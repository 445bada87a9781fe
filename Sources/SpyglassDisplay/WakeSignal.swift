import Foundation
import Synchronization

/// A window's wake-up: a flag with a condition the window's wait sleeps on, one per window.
///
/// Feed threads keep this object, never a closure: a closure kept in a generic container and
/// read through `inout` (as `Mutex<(() -> Void)?>.withLock { $0 }` does) is wrapped in a new
/// reabstraction thunk on every read, so each call went through one more thunk than the last:
/// 32 bytes more of the feed thread's stack per picture and a stack overflow (SIGSEGV) after
/// about 65,000 pictures (issue 17; `WakePathStackTests` measures the stack).
public final class WakeSignal: Sendable {
    private let condition = NSCondition()
    /// Written under `condition`'s lock (so a sleeper cannot miss it); read without it too.
    private let pending = Atomic<Bool>(false)

    /// A signal nobody has set yet.
    public init() {}

    /// Sets the flag and wakes a sleeping ``take(waitingUpTo:)``. Safe from any thread; holds a
    /// lock only for the store.
    public func wake() {
        condition.lock()
        pending.store(true, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }

    /// Takes a pending wake-up, first sleeping up to `micros` µs for one if none is pending.
    /// - Returns: whether a wake-up was taken (several wakes before it count once).
    public func take(waitingUpTo micros: Int) -> Bool {
        if pending.exchange(false, ordering: .acquiringAndReleasing) { return true }
        guard micros > 0 else { return false }
        condition.lock()
        if !pending.load(ordering: .acquiring) {
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(micros) / 1e6))
        }
        condition.unlock()
        return pending.exchange(false, ordering: .acquiringAndReleasing)
    }
}

/// The window a feed wakes when it has a picture: none while no window runs, and aimed again
/// when the window changes. Holding it does not hold the window (only its ``WakeSignal``).
public final class WakeTarget: Sendable {
    private let target = Mutex<WakeSignal?>(nil)

    /// A target aimed at no window.
    public init() {}

    /// Aims at `signal` (a window's ``WallWindow/waker``), or at no
    /// window (nil).
    public func aim(at signal: WakeSignal?) { target.withLock { $0 = signal } }

    /// Wakes the window aimed at, if any. Safe from any thread.
    public func wake() { target.withLock { $0 }?.wake() }
}
