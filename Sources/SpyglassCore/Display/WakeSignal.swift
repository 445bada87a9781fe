import Foundation
import Synchronization

/// A wake-up flag with a condition to sleep on: one per window.
final class WakeSignal: Sendable {
    private let condition = NSCondition()
    /// Written under `condition`'s lock (so a sleeper cannot miss it); read without it too.
    private let pending = Atomic<Bool>(false)

    func wake() {
        condition.lock()
        pending.store(true, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }

    /// Takes a pending wake-up, first sleeping up to `micros` µs for one if none is pending.
    func take(waitingUpTo micros: Int) -> Bool {
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
