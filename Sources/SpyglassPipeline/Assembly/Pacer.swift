/// Releases access units of a recorded stream (file, stdin) at the stream's frame rate.
///
/// Release time of unit k: `max(arrival_k, release_{k-1} + period)`. A file (all data at once)
/// plays at the frame rate; a pipe fed in real time at the same rate passes with no added
/// wait; a pipe that falls behind is never held. Live sockets are never paced.
public struct Pacer {
    /// Time between frames, µs (0 = untimed: release at once).
    public let periodMicros: UInt64
    private var lastRelease: UInt64?

    /// - Parameter framesPerSecond: pace; nil or ≤ 0 means untimed.
    public init(framesPerSecond: Double?) {
        if let fps = framesPerSecond, fps > 0 { periodMicros = UInt64(1_000_000 / fps) } else { periodMicros = 0 }
    }

    /// Monotonic µs at which to release a unit that arrived at `arrivalMicros`; advances the schedule.
    public mutating func releaseTime(arrivalMicros: UInt64) -> UInt64 {
        guard periodMicros > 0 else { return arrivalMicros }
        let t = max(arrivalMicros, (lastRelease ?? arrivalMicros) + (lastRelease == nil ? 0 : periodMicros))
        lastRelease = t
        return t
    }
}
