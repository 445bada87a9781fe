#if canImport(Glibc)
import Glibc
#endif

/// Replays a recording as it arrived: each access unit is delivered at its recorded arrival
/// time (relative to the first one played), divided by `speed`. Behaves as a live source, so the
/// same pipeline (idle flush, no pacing) handles it.
public final class RecordingSource: ByteSource {
    public let label: String
    public let isLive = true
    public private(set) var counters = SourceCounters()
    public let index: RecordingIndex
    private var fd: Int32
    private let speed: Double
    private let loop: Bool
    private var range: Range<Int>
    private var position: Int
    private var chunkOffset = 0
    private var current: [UInt8] = []
    private var startMicros: UInt64 = 0
    private var firstRecordedMicros: UInt64 = 0

    /// - Parameters:
    ///   - streamPath: the `.h264`/`.h265` file; its `.idx` must exist.
    ///   - speed: 0.25…4 (1 = as recorded); `untimed` delivers as fast as possible.
    ///   - fromSeconds/toSeconds: play this part (from the keyframe at or before `from`).
    /// - Throws: ``SourceError/open(_:)``.
    public init(streamPath: String, speed: Double = 1, untimed: Bool = false, loop: Bool = false,
                fromSeconds: Double? = nil, toSeconds: Double? = nil) throws {
        guard let idx = RecordingIndex.load(streamPath: streamPath) else {
            throw SourceError.open("\(streamPath): no recording index (\(streamPath).idx)")
        }
        guard !idx.entries.isEmpty else { throw SourceError.open("\(streamPath): the recording holds no complete access unit") }
        fd = open(streamPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SourceError.open("\(streamPath): \(errnoText())") }
        index = idx
        label = streamPath
        self.speed = untimed ? 0 : max(0.25, min(4, speed))
        self.loop = loop
        let t0 = idx.entries[0].firstByteMicros
        var lo = 0, hi = idx.entries.count
        if let from = fromSeconds {
            let target = t0 + UInt64(max(0, from) * 1e6)
            let starts = idx.entries.indices.filter { (idx.entries[$0].keyframe || idx.entries[$0].recoveryPoint) && idx.entries[$0].firstByteMicros <= target }
            lo = starts.last ?? 0
        }
        if let to = toSeconds {
            let end = t0 + UInt64(max(0, to) * 1e6)
            hi = max(lo + 1, idx.entries.firstIndex { $0.firstByteMicros > end } ?? idx.entries.count)
        }
        range = lo..<hi
        position = lo
    }

    deinit { close() }

    /// Seconds of the recording, from its index.
    public var durationSeconds: Double {
        guard let a = index.entries.first, let b = index.entries.last else { return 0 }
        return Double(b.lastByteMicros - a.firstByteMicros) / 1e6
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        if current.isEmpty || chunkOffset >= current.count {
            if position >= range.upperBound {
                guard loop else { return .end }
                position = range.lowerBound
                startMicros = 0
            }
            let e = index.entries[position]
            if startMicros == 0 { startMicros = MonotonicClock.nowMicros(); firstRecordedMicros = e.firstByteMicros }
            if speed > 0 {
                let due = startMicros + UInt64(Double(e.firstByteMicros - firstRecordedMicros) / speed)
                let now = MonotonicClock.nowMicros()
                if due > now {
                    MonotonicClock.sleep(untilMicros: min(due, now + UInt64(timeoutMicros)))
                    if MonotonicClock.nowMicros() < due { return .timeout }
                }
            }
            current = [UInt8](repeating: 0, count: e.size)
            let n = current.withUnsafeMutableBytes { pread(fd, $0.baseAddress, e.size, off_t(e.offset)) }
            guard n == e.size else { throw SourceError.read("\(label): short read at \(e.offset)") }
            chunkOffset = 0
            position += 1
        }
        let n = min(buffer.count, current.count - chunkOffset)
        current.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + chunkOffset, byteCount: n) }
        chunkOffset += n
        counters.datagrams += 1
        counters.bytes += n
        return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: false)
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
