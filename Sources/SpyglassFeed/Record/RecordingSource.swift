#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import SpyglassPipeline
import SpyglassIngest

/// Replays a recording as it arrived: each access unit is delivered at its recorded arrival
/// time (relative to the first one played), divided by `speed`. Behaves as a live source, so the
/// same pipeline (idle flush, no pacing) handles it.
///
/// The window's thread controls it (pause, step, seek, speed) while the feed's thread reads it:
/// all its changing state sits in one `Mutex`, and no read sleeps while holding it.
public final class RecordingSource: ByteSource, Sendable {
    public let label: String
    public let deliversInRealTime = true
    public let index: RecordingIndex
    private let fd: Int32
    private let closed = Atomic<Bool>(false)
    private let loop: Bool
    /// At the end, pause on the last picture instead of ending (a window's replay: it stays open
    /// until `q`, as ffplay's does; resuming there starts again from the beginning).
    private let holdsAtEnd: Bool
    /// Each entry's own presentation time, in the index's time (µs), where the recording has
    /// them: a container's import writes them beside it (``presentationPath(for:)``).
    private let presentation: [UInt64]?
    /// With ``presentation``: `--to`'s end, in the index's time.
    private let showEndMicros: UInt64?

    /// The file beside a recording that holds each entry's presentation time, a line each (µs,
    /// the index's time).
    public static func presentationPath(for streamPath: String) -> String { streamPath + ".pts" }

    private static func loadPresentation(_ streamPath: String, count: Int) -> [UInt64]? {
        guard let text = try? String(contentsOfFile: presentationPath(for: streamPath), encoding: .utf8) else { return nil }
        let values = text.split(separator: "\n").compactMap { UInt64($0) }
        return values.count == count ? values : nil
    }
    /// Longest pause between two recorded access units that replay keeps, seconds.
    public static let maxGapSeconds = 10.0

    private struct State {
        var counters = SourceCounters()
        var range: Range<Int>
        var position: Int
        var chunkOffset = 0
        var current: [UInt8] = []
        var startMicros: UInt64 = 0
        var firstRecordedMicros: UInt64 = 0
        var lastRecordedMicros: UInt64 = 0
        var paused = false
        var stepRequested = false
        var seekTarget: Double?
        var speedNow: Double
        var delivered: [(entry: Int, hidden: Bool)] = []
        var hideBeforeMicros: UInt64?
        /// Where the last seek's deliveries start (an index into `delivered`), and how many of
        /// its entries were delivered hidden and not yet matched by a decoded picture.
        var seekStart = 0
        var hiddenOwed = 0
        /// The last seek's target in the index's time, for a recording with presentation times.
        var segmentTarget: UInt64?
        /// With `--to`: the entry the shown pictures end before (their count from where delivery
        /// started), and the pictures output since then.
        var showEnd: Int?
        var segmentFirstEntry = 0
        var segmentOutputs = 0
        /// Paused on the last picture (``holdsAtEnd``).
        var heldAtEnd = false
        var chunkLeft: Bool { !current.isEmpty && chunkOffset < current.count }

        /// Delivery starts again at `entry` (a seek, a loop): decoded pictures count from here.
        mutating func startSegment(at entry: Int, target: UInt64? = nil) {
            seekStart = delivered.count
            segmentTarget = target
            hiddenOwed = 0
            segmentFirstEntry = entry
            segmentOutputs = 0
        }
    }
    private let state: Mutex<State>

    public var counters: SourceCounters { state.withLock { $0.counters } }

    /// - Parameters:
    ///   - streamPath: the `.h264`/`.h265` file; its `.idx` must exist.
    ///   - speed: 0.25…4 (1 = as recorded); `untimed` delivers as fast as possible.
    ///   - fromSeconds/toSeconds: play this part (from the keyframe at or before `from`).
    ///   - label: the name shown for it (default: `streamPath`; a container's name when it was
    ///     demuxed into a temporary recording).
    ///   - holdsAtEnd: pause on the last picture rather than end (``holdsAtEnd``).
    /// - Throws: ``SourceError/open(_:)``.
    public init(streamPath: String, speed: Double = 1, untimed: Bool = false, loop: Bool = false,
                fromSeconds: Double? = nil, toSeconds: Double? = nil, label: String? = nil, holdsAtEnd: Bool = false) throws {
        let name = label ?? streamPath   // errors name what the user gave, not a temporary import
        guard let idx = RecordingIndex.load(streamPath: streamPath) else {
            throw SourceError.open("\(streamPath): no recording index (\(streamPath).idx)")
        }
        guard !idx.entries.isEmpty else { throw SourceError.open("\(name): the recording holds no complete access unit") }
        index = idx
        self.label = label ?? streamPath
        self.loop = loop
        self.holdsAtEnd = holdsAtEnd
        let t0 = idx.entries[0].firstByteMicros
        var lo = 0, hi = idx.entries.count
        if let from = fromSeconds {
            let length = Double((idx.entries.last?.firstByteMicros ?? t0) - t0) / 1e6
            guard from <= length else {
                throw SourceError.open(String(format: "%@: --from %.3f s is past the last picture of the recording (at %.3f s)", name, from, length))
            }
            let target = t0 + UInt64(max(0, from) * 1e6)
            let starts = idx.entries.indices.filter { (idx.entries[$0].keyframe || idx.entries[$0].recoveryPoint) && idx.entries[$0].firstByteMicros <= target }
            lo = starts.last ?? 0
        }
        if let to = toSeconds {
            let end = t0 + UInt64(max(0, to) * 1e6)
            hi = max(lo + 1, idx.entries.firstIndex { $0.firstByteMicros > end } ?? idx.entries.count)
        }
        // With --to, delivery goes on past `hi` by the deepest reorder (16 pictures, ITU-T H.264
        // §A.3.1): a B-frame shown before the end can come after a later P-frame in decode order.
        // The pictures past the end are decoded, not shown (``picture(fromAccessUnit:)``).
        let deliverEnd = toSeconds == nil ? hi : min(idx.entries.count, hi + 16)
        var st = State(range: lo..<deliverEnd, position: lo, speedNow: untimed ? 0 : max(0.25, min(4, speed)))
        st.showEnd = toSeconds == nil ? nil : hi
        st.segmentFirstEntry = lo
        if let from = fromSeconds { st.hideBeforeMicros = t0 + UInt64(max(0, from) * 1e6) }
        st.segmentTarget = st.hideBeforeMicros
        presentation = Self.loadPresentation(streamPath, count: idx.entries.count)
        showEndMicros = toSeconds.map { t0 + UInt64(max(0, $0) * 1e6) }
        // Opened last: nothing after it throws, so the descriptor is never left open.
        let fd = open(streamPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SourceError.open("\(name): \(errnoText())") }
        self.fd = fd
        state = Mutex(st)
    }

    deinit { close() }

    /// Seconds of the recording, from its index.
    public var durationSeconds: Double {
        guard let a = index.entries.first, let b = index.entries.last else { return 0 }
        return b.lastByteMicros > a.firstByteMicros ? Double(b.lastByteMicros - a.firstByteMicros) / 1e6 : 0
    }

    /// For a decoded picture, the recording entry its access unit `index` came from (one access
    /// unit per entry, in delivery order), and whether it only leads up to a seek target (decoded,
    /// not shown). Call once per decoded picture, in the decoder's output order.
    ///
    /// A seek hides by presentation order, not by entry: the entries before the target are a
    /// prefix of the seek's deliveries (decode order), and with B-frames the pictures a decoder
    /// outputs first are not theirs (decode I0 P3 B1 B2, output I0 B1 B2 P3). The first N pictures
    /// output after a seek whose first N entries were before the target are the ones hidden,
    /// as each output rank takes the time of the entry at that rank (times rise in decode order
    /// and, shifted by the reorder delay, are the presentation times: ITU-T H.264 §C.4.5.3).
    public func picture(fromAccessUnit index: Int) -> (entry: RecordingIndex.Entry, hidden: Bool)? {
        guard let (entry, hidden) = state.withLock({ s -> (Int, Bool)? in
            guard index >= 0 && index < s.delivered.count else { return nil }
            let d = s.delivered[index]
            guard index >= s.seekStart else { return (d.entry, d.hidden) }   // decoded before the last seek
            if let own = presentation?[d.entry] {
                // Each picture by its own time: exact whatever the decoder drops on the way (the
                // leading pictures of an open GOP after a seek, a file that starts mid-GOP).
                return (d.entry, s.segmentTarget.map { own < $0 } == true || showEndMicros.map { own > $0 } == true)
            }
            s.segmentOutputs += 1
            if let end = s.showEnd, s.segmentOutputs > end - s.segmentFirstEntry { return (d.entry, true) }   // past --to
            guard s.hiddenOwed > 0 else { return (d.entry, false) }
            s.hiddenOwed -= 1
            return (d.entry, true)
        }) else { return nil }
        return (self.index.entries[entry], hidden)
    }

    // MARK: - control (from the window's thread)

    /// Paused, or held on the last picture: the feed keeps its decoder (and its last picture).
    public var isHolding: Bool { state.withLock { $0.paused } }
    /// Paused on the last picture (``holdsAtEnd``).
    public var isHeldAtEnd: Bool { state.withLock { $0.paused && $0.heldAtEnd } }
    /// Pauses or resumes delivery.
    public func togglePause() { state.withLock { $0.paused.toggle(); $0.startMicros = 0 } }
    /// While paused: deliver one more access unit.
    public func step() { state.withLock { $0.stepRequested = true } }
    /// Jumps by `seconds` (from the keyframe or recovery point at or before the target). While
    /// paused, it delivers up to the target's picture and holds there.
    public func seek(by seconds: Double) {
        state.withLock { $0.seekTarget = ($0.seekTarget ?? self.seconds(at: $0.position)) + seconds }
    }
    /// Multiplies the speed (kept within 0.25…4).
    public func changeSpeed(by factor: Double) {
        state.withLock { s in if s.speedNow > 0 { s.speedNow = max(0.25, min(4, s.speedNow * factor)); s.startMicros = 0 } }
    }
    /// Where playback is, seconds from the start of the recording.
    public var positionSeconds: Double { seconds(at: state.withLock { $0.position }) }

    private func seconds(at position: Int) -> Double {
        let i = min(max(position - 1, 0), index.entries.count - 1)
        return Double(index.entries[i].firstByteMicros - index.entries[0].firstByteMicros) / 1e6
    }
    /// Playback state for a progress line: (position s, duration s, access unit, total, speed, paused).
    public var progress: (position: Double, duration: Double, frame: Int, frames: Int, speed: Double, paused: Bool) {
        let (position, speed, paused) = state.withLock { ($0.position, $0.speedNow, $0.paused) }
        return (seconds(at: position), durationSeconds, position, index.entries.count, speed, paused)
    }

    /// What the next read does, decided under the lock.
    private enum Plan {
        /// `holdAtEnd`: the first hold on the last picture (said once).
        case hold, holdAtEnd, end, copy
        /// Deliver entry `entry` once monotonic `dueMicros` has come (nil: at once).
        case entry(Int, dueMicros: UInt64?)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        switch state.withLock({ plan(&$0) }) {
        case .hold:
            usleep(UInt32(min(timeoutMicros, 20_000)))
            return .timeout
        case .holdAtEnd:
            Log.info("\(label): the end of the recording: holding the last picture (q closes, space plays it again, arrows seek)")
            return .timeout
        case .end:
            return .end
        case .copy:
            break
        case .entry(let i, let due):
            if let due, due > MonotonicClock.nowMicros() {
                MonotonicClock.sleep(untilMicros: min(due, MonotonicClock.nowMicros() + UInt64(timeoutMicros)))
                if MonotonicClock.nowMicros() < due { return .timeout }
            }
            let e = index.entries[i]
            var bytes = [UInt8](repeating: 0, count: e.size)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, e.size, off_t(e.offset)) }
            guard n == e.size else { throw SourceError.read("\(label): short read at \(e.offset)") }
            state.withLock { s in
                s.current = bytes
                s.chunkOffset = 0
                // Frame-accurate seeks: pictures between the keyframe and the target are decoded, not shown.
                let hidden = s.hideBeforeMicros.map { e.firstByteMicros < $0 } ?? false
                if hidden { s.hiddenOwed += 1 } else { s.hideBeforeMicros = nil }
                s.delivered.append((i, hidden))
                s.position = i + 1
            }
        }
        let n = state.withLock { s -> Int in
            let n = buffer.copyPrefix(of: s.current, from: s.chunkOffset)
            s.chunkOffset += n
            s.counters.datagrams += 1
            s.counters.bytes += n
            return n
        }
        return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: false)
    }

    /// Applies the window's controls and picks what to deliver next (under the lock).
    private func plan(_ s: inout State) -> Plan {
        if let target = s.seekTarget {
            s.seekTarget = nil
            let t0 = index.entries[0].firstByteMicros
            // A seek past the end goes to the last picture (a target no picture reaches would hide
            // every picture after it).
            let last = index.entries[max(s.range.lowerBound, (s.showEnd ?? s.range.upperBound) - 1)].firstByteMicros
            let want = min(t0 + UInt64(max(0, target) * 1e6), last)
            let starts = index.entries.indices.filter { (index.entries[$0].keyframe || index.entries[$0].recoveryPoint) && index.entries[$0].firstByteMicros <= want }
            s.position = max(s.range.lowerBound, min(starts.last ?? s.range.lowerBound, s.range.upperBound - 1))
            s.hideBeforeMicros = want
            s.startSegment(at: s.position, target: want)
            s.current = []
            s.chunkOffset = 0
            s.startMicros = 0
            s.lastRecordedMicros = 0
            s.heldAtEnd = false
        }
        // Paused, a seek still goes on to its target: the pictures from the keyframe are decoded
        // (hidden) until the target's is shown, then it holds (the picture moved with the bar).
        if s.paused && !s.stepRequested && !s.chunkLeft && s.hideBeforeMicros == nil { return .hold }
        if s.paused && s.stepRequested && !s.chunkLeft { s.stepRequested = false; s.startMicros = 0 }
        if s.chunkLeft { return .copy }
        if s.position >= s.range.upperBound {
            if holdsAtEnd && !loop && !s.heldAtEnd {
                s.heldAtEnd = true
                s.paused = true
                return .holdAtEnd
            }
            guard loop || s.heldAtEnd else { return .end }
            // Looping, or resumed after holding at the end: from the beginning again.
            s.heldAtEnd = false
            s.position = s.range.lowerBound
            s.startSegment(at: s.position)
            s.startMicros = 0
            s.lastRecordedMicros = 0
        }
        let e = index.entries[s.position]
        if s.startMicros == 0 || e.firstByteMicros < s.firstRecordedMicros {
            s.startMicros = MonotonicClock.nowMicros()
            s.firstRecordedMicros = e.firstByteMicros
        }
        // A pause in the recording longer than maxGapSeconds is replayed shortened to it (a
        // stalled link, or a corrupt index claiming days between two frames).
        let gap = e.firstByteMicros > s.lastRecordedMicros && s.lastRecordedMicros > 0 ? e.firstByteMicros - s.lastRecordedMicros : 0
        let maxGap = UInt64(Self.maxGapSeconds * 1e6)
        if gap > maxGap {
            s.firstRecordedMicros += gap - maxGap
            Log.info(String(format: "%@: a gap of %.0f s in the recording, replayed as %.0f s", label, Double(gap) / 1e6, Self.maxGapSeconds))
        }
        s.lastRecordedMicros = e.firstByteMicros
        let speed = s.paused ? 0 : s.speedNow
        guard speed > 0 else { return .entry(s.position, dueMicros: nil) }
        return .entry(s.position, dueMicros: s.startMicros + UInt64(Double(e.firstByteMicros - s.firstRecordedMicros) / speed))
    }

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { Glibc.close(fd) }
    }
}
