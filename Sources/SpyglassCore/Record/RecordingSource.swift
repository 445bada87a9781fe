#if canImport(Glibc)
import Glibc
#endif
import Foundation

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
    private var lastRecordedMicros: UInt64 = 0
    /// Longest pause between two recorded access units that replay keeps, seconds.
    public static let maxGapSeconds = 10.0
    private let control = NSLock()
    private var paused = false
    private var stepRequested = false
    private var seekTarget: Double?
    private var speedNow: Double
    private var delivered: [(entry: Int, hidden: Bool)] = []
    private var hideBeforeMicros: UInt64?

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
        self.speedNow = self.speed
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
        if let from = fromSeconds { hideBeforeMicros = t0 + UInt64(max(0, from) * 1e6) }
    }

    deinit { close() }

    /// Seconds of the recording, from its index.
    public var durationSeconds: Double {
        guard let a = index.entries.first, let b = index.entries.last else { return 0 }
        return b.lastByteMicros > a.firstByteMicros ? Double(b.lastByteMicros - a.firstByteMicros) / 1e6 : 0
    }

    /// The recording entry the receiver's access unit `index` came from (one access unit per entry,
    /// in delivery order), and whether it only leads up to a seek target (decode, do not show).
    public func entry(forAccessUnit index: Int) -> (entry: RecordingIndex.Entry, hidden: Bool)? {
        control.lock(); defer { control.unlock() }
        guard index >= 0, index < delivered.count else { return nil }
        let d = delivered[index]
        return (self.index.entries[d.entry], d.hidden)
    }

    // MARK: - control (from the window's thread)

    /// Pauses or resumes delivery.
    public func togglePause() { control.lock(); paused.toggle(); startMicros = 0; control.unlock() }
    /// While paused: deliver one more access unit.
    public func step() { control.lock(); stepRequested = true; control.unlock() }
    /// Jumps by `seconds` (from the keyframe or recovery point at or before the target).
    public func seek(by seconds: Double) { control.lock(); seekTarget = (seekTarget ?? positionSeconds) + seconds; control.unlock() }
    /// Multiplies the speed (kept within 0.25…4).
    public func changeSpeed(by factor: Double) {
        control.lock(); if speedNow > 0 { speedNow = max(0.25, min(4, speedNow * factor)); startMicros = 0 }; control.unlock()
    }
    /// Where playback is, seconds from the start of the recording.
    public var positionSeconds: Double {
        let i = min(max(position - 1, 0), index.entries.count - 1)
        return Double(index.entries[i].firstByteMicros - index.entries[0].firstByteMicros) / 1e6
    }
    /// Playback state for a progress line: (position s, duration s, access unit, total, speed, paused).
    public var progress: (position: Double, duration: Double, frame: Int, frames: Int, speed: Double, paused: Bool) {
        control.lock(); defer { control.unlock() }
        return (positionSeconds, durationSeconds, position, index.entries.count, speedNow, paused)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        control.lock()
        if let target = seekTarget {
            seekTarget = nil
            let t0 = index.entries[0].firstByteMicros
            let want = t0 + UInt64(max(0, target) * 1e6)
            let starts = index.entries.indices.filter { (index.entries[$0].keyframe || index.entries[$0].recoveryPoint) && index.entries[$0].firstByteMicros <= want }
            position = max(range.lowerBound, min(starts.last ?? range.lowerBound, range.upperBound - 1))
            hideBeforeMicros = want
            current = []
            chunkOffset = 0
            startMicros = 0
            lastRecordedMicros = 0
        }
        let holding = paused && !stepRequested && (current.isEmpty || chunkOffset >= current.count)
        if paused && stepRequested && (current.isEmpty || chunkOffset >= current.count) { stepRequested = false; startMicros = 0 }
        let speed = paused ? 0 : speedNow
        control.unlock()
        if holding {
            usleep(UInt32(min(timeoutMicros, 20_000)))
            return .timeout
        }
        if current.isEmpty || chunkOffset >= current.count {
            if position >= range.upperBound {
                guard loop else { return .end }
                position = range.lowerBound
                startMicros = 0
            }
            let e = index.entries[position]
            if startMicros == 0 { startMicros = MonotonicClock.nowMicros(); firstRecordedMicros = e.firstByteMicros }
            if e.firstByteMicros < firstRecordedMicros { startMicros = MonotonicClock.nowMicros(); firstRecordedMicros = e.firstByteMicros }
            // A pause in the recording longer than maxGapSeconds is replayed shortened to it (a
            // stalled link, or a corrupt index claiming days between two frames).
            let gap = e.firstByteMicros > lastRecordedMicros && lastRecordedMicros > 0 ? e.firstByteMicros - lastRecordedMicros : 0
            let maxGap = UInt64(Self.maxGapSeconds * 1e6)
            if gap > maxGap {
                firstRecordedMicros += gap - maxGap
                Log.info(String(format: "%@: a gap of %.0f s in the recording, replayed as %.0f s", label, Double(gap) / 1e6, Self.maxGapSeconds))
            }
            lastRecordedMicros = e.firstByteMicros
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
            // Frame-accurate seeks: pictures between the keyframe and the target are decoded, not shown.
            let hidden = hideBeforeMicros.map { e.firstByteMicros < $0 } ?? false
            if !hidden { hideBeforeMicros = nil }
            control.lock(); delivered.append((position, hidden)); control.unlock()
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
