import Synchronization

/// Where a feed reads the time and waits: the monotonic clock, or a ``ManualClock`` in tests,
/// which moves only when told (swift-nio's `EmbeddedEventLoop` is the model), so that a
/// pipeline runs on an in-memory source with no sockets, no sleeps and no timing assumptions.
///
/// The stages themselves read no clock: every time they use comes in with the data
/// (`arrivalMicros`) or with a tick (`nowMicros`).
public protocol FeedClock: Sendable {
    /// Now, monotonic µs.
    func nowMicros() -> UInt64
    /// Returns at monotonic time `micros` (at once when it has passed).
    func sleep(untilMicros micros: UInt64)
}

/// `CLOCK_MONOTONIC` (``MonotonicClock``): what every live feed runs on.
public struct SystemClock: FeedClock {
    public init() {}
    public func nowMicros() -> UInt64 { MonotonicClock.nowMicros() }
    public func sleep(untilMicros micros: UInt64) { MonotonicClock.sleep(untilMicros: micros) }
}

/// A clock that stands still until moved: ``advance(toMicros:)`` by whoever scripts the input
/// (an in-memory source moves it to each chunk's arrival), and a ``sleep(untilMicros:)`` moves
/// it to the end of the sleep at once. Never goes backwards.
public final class ManualClock: FeedClock {
    private let now: Atomic<UInt64>

    /// - Parameter startMicros: the time it shows first, µs (an arbitrary fixed point, like boot).
    public init(startMicros: UInt64 = 1_000_000) { now = Atomic(startMicros) }

    public func nowMicros() -> UInt64 { now.load(ordering: .acquiring) }

    /// Moves the clock to `micros`; a time in the past leaves it where it is.
    public func advance(toMicros micros: UInt64) { now.max(micros, ordering: .acquiringAndReleasing) }

    /// Moves the clock on by `micros`.
    public func advance(byMicros micros: UInt64) { now.add(micros, ordering: .acquiringAndReleasing) }

    public func sleep(untilMicros micros: UInt64) { advance(toMicros: micros) }
}
