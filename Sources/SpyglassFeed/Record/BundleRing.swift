import Synchronization
import SpyglassPipeline

/// The last seconds of what a feed received, as it came (`--bundle DIR`): every datagram (or
/// read) with its arrival time. It keeps at least ``seconds``, from the last random access point
/// before them (``markRandomAccess(atMicros:)``), so that a replay of it starts with a picture;
/// and never more than ``maxBytes``, so it is bounded whatever arrives. A bug bundle writes it as a packet capture (``PcapWriter``) that
/// `spyglass replay` plays back with its timing.
public final class BundleRing: Sendable {
    /// One datagram (or read): its bytes, its arrival (monotonic µs) and wall-clock time (µs
    /// since the epoch).
    public struct Entry: Sendable {
        public let bytes: [UInt8]
        public let arrivalMicros: UInt64
        public let wallMicros: UInt64
    }
    /// How much time it keeps, seconds.
    public let seconds: Double
    /// The most bytes it keeps (64 MiB by default): a flood shortens the time kept.
    public let maxBytes: Int
    private struct State {
        var entries: [Entry] = []
        var head = 0
        var bytes = 0
        var dropped = 0
        /// First-byte arrivals of the random access points in the ring, oldest first.
        var randomAccess: [UInt64] = []
    }
    private let state = Mutex(State())

    /// - Parameters: seconds: the time kept; maxBytes: the bytes kept at most.
    public init(seconds: Double = 30, maxBytes: Int = 64 << 20) {
        self.seconds = seconds
        self.maxBytes = maxBytes
    }

    /// Keeps a copy of `bytes`, which arrived at `arrivalMicros` (monotonic), and lets go of what
    /// is older than ``seconds`` or beyond ``maxBytes``.
    public func keep(_ bytes: UnsafeRawBufferPointer, arrivalMicros: UInt64) {
        let wall = UInt64(max(0, Int64(bitPattern: arrivalMicros) + MonotonicClock.wallMinusMonotonicMicros))
        let entry = Entry(bytes: Array(bytes.bindMemory(to: UInt8.self)), arrivalMicros: arrivalMicros, wallMicros: wall)
        let horizon = UInt64(seconds * 1e6)
        state.withLock { s in
            s.entries.append(entry)
            s.bytes += entry.bytes.count
            // Time trims up to the last random access point at least `seconds` old (none: none).
            let old = arrivalMicros - min(arrivalMicros, horizon)
            let keepFrom = s.randomAccess.last { $0 <= old } ?? 0
            s.randomAccess.removeAll { $0 < keepFrom }
            while s.head < s.entries.count - 1, s.bytes > maxBytes || s.entries[s.head].arrivalMicros < keepFrom {
                s.bytes -= s.entries[s.head].bytes.count
                s.head += 1
                s.dropped += 1
            }
            if s.head > 4096 && s.head * 2 > s.entries.count {
                s.entries.removeFirst(s.head)
                s.head = 0
            }
        }
    }

    /// A random access point (an IDR, a CRA, a recovery point) whose first byte arrived at
    /// `atMicros` (monotonic): the ring keeps what came from it on.
    public func markRandomAccess(atMicros: UInt64) {
        state.withLock { s in
            if s.randomAccess.count >= 10_000 { s.randomAccess.removeFirst(5_000) }
            s.randomAccess.append(atMicros)
        }
    }

    /// What it holds now, oldest first.
    public var entries: [Entry] { state.withLock { Array($0.entries[$0.head...]) } }
}
