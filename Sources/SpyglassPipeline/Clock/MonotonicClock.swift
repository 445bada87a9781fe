#if canImport(Glibc)
import Glibc
#endif

/// The one clock every stage stamps with: `CLOCK_MONOTONIC`, in µs.
public enum MonotonicClock {
    /// Now, in µs since an arbitrary fixed point (boot).
    @inline(__always)
    public static func nowMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// Wall-clock now, in µs since the Unix epoch (for capture stamps, which are wall times).
    public static func wallMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1_000
    }

    /// Wall clock minus monotonic clock now, µs: adds to a monotonic stamp to give wall time.
    public static var wallMinusMonotonicMicros: Int64 {
        Int64(bitPattern: wallMicros()) - Int64(bitPattern: nowMicros())
    }

    /// Sleeps until the monotonic time `micros` (returns at once if it has passed).
    public static func sleep(untilMicros micros: UInt64) {
        let now = nowMicros()
        guard micros > now else { return }
        let d = micros - now
        var ts = timespec(tv_sec: Int(d / 1_000_000), tv_nsec: Int(d % 1_000_000) * 1000)
        var rest = timespec()
        while nanosleep(&ts, &rest) != 0 && errno == EINTR { ts = rest }
    }
}
