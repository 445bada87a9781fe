/// Raw Annex B byte stream (ITU-T H.264 / H.265 Annex B) from UDP datagrams, TCP, a file or a
/// pipe: the start-code scanner, plus the rules that end a NAL unit and an access unit on a live
/// input without waiting for the next start code (``IdleFlushPolicy``: idle flush, learned
/// mid-frame waits, burst end).
///
/// Events: units as the scanner completes them (after the cut the same bytes showed, if any);
/// ``DepacketizerEvent/accessUnitEnd(_:atMicros:minimumSlices:)``
/// with `.idleGap`, `.burstEnd` or `.endOfStream`; ``DepacketizerEvent/cut(unitLastByteMicros:pauseMicros:)``
/// when bytes continue a unit an idle flush had ended.
import SpyglassBitstream
public struct AnnexBDepacketizer: Depacketizer {
    public var framing: Framing? { .annexB }
    private var scanner: AnnexBScanner
    private var policy: IdleFlushPolicy
    private let datagrams: Bool
    private var flushedSinceData = true
    private var lastDataMicros: UInt64 = 0
    /// An idle flush ended a unit; the next bytes tell whether it was whole.
    private var awaitingFlushVerdict = false
    /// The units one push completed, passed on after the cut those bytes may show (kept to reuse its storage).
    private var completed: [NALUnit] = []
    /// When ``tick(nowMicros:emit:)`` last flushed on idle, on its clock, µs.
    private var flushMicros: UInt64 = 0

    /// - Parameters:
    ///   - maxUnitBytes: cap on one NAL unit, bytes.
    ///   - datagrams: the source delivers datagrams (their sizes drive the burst-end rule).
    ///   - idleFlushMicros: quiet time that ends the pending unit on a live input, µs (0: never;
    ///     files use 0, since their next bytes are always there).
    public init(maxUnitBytes: Int, datagrams: Bool, idleFlushMicros: Int) {
        scanner = AnnexBScanner(maxUnitBytes: maxUnitBytes)
        // A unit cut by an idle flush is passed on again whole when the rest of it comes.
        scanner.reopensCutUnits = idleFlushMicros > 0
        policy = IdleFlushPolicy(baseMicros: idleFlushMicros)
        self.datagrams = datagrams
    }

    /// How long after the last byte a unit cut by an idle flush is still held for a repair, µs
    /// (1 s: a sender pauses inside a NAL unit for milliseconds; longer, it has gone, and garbage
    /// must not pin its last "unit", up to ``AnnexBScanner/maxUnitBytes``, for good).
    public static let cutUnitHoldMicros: UInt64 = 1_000_000

    /// Bytes the scanner holds now (``AnnexBScanner/retainedBytes``).
    public var retainedBytes: Int { scanner.retainedBytes }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        let previousDataMicros = lastDataMicros
        lastDataMicros = arrivalMicros
        if datagrams { policy.noteDatagram(size: chunk.count) }
        flushedSinceData = false
        // The bytes that show a cut may also end the reopened unit: the cut is said first, so
        // that its damage is noted before the whole unit repairs it.
        var units = completed
        completed = []
        let outcome = scanner.push(chunk, arrivalMicros: arrivalMicros) { units.append($0) }
        if truncated { scanner.markDamaged() }
        defer {
            units.removeAll(keepingCapacity: true)
            completed = units
        }
        if let cutEnd = outcome.cutUnitLastByteMicros {
            // The sender paused inside a NAL unit for longer than the idle time: learn it.
            awaitingFlushVerdict = false
            let pause = arrivalMicros - min(arrivalMicros, previousDataMicros)
            emit(.cut(unitLastByteMicros: cutEnd, pauseMicros: pause))
            let raised = policy.noteCut(pauseMicros: Int(clamping: pause))
            let after = !datagrams ? "data" : raised.afterShortDatagram ? "a short datagram" : "a full-size datagram"
            let most = raised.micros >= IdleFlushPolicy.longestWaitMicros ? " (the longest it waits)" : ""
            emit(.note(String(format: "an idle flush cut a NAL unit (the sender paused %.1f ms inside it): now waiting %.1f ms after %@%@",
                              Double(pause) / 1000, Double(raised.micros) / 1000, after, most)))
        } else if awaitingFlushVerdict {
            awaitingFlushVerdict = false
            if let lowered = policy.noteCleanFlush() {
                emit(.note(String(format: "idle flush back to %.1f ms", Double(lowered) / 1000)))
            }
        }
        for unit in units { emit(.unit(unit)) }
        if datagrams && policy.isBurstEnd {
            // The sender's last, short datagram of a burst: the NAL unit ends here, and the
            // access unit too once it has the slices the last pictures had.
            if scanner.flush(atMicros: arrivalMicros, reason: .idle, emit: { emit(.unit($0)) }) { awaitingFlushVerdict = true }
            if let slices = policy.slicesPerPicture {
                emit(.accessUnitEnd(.burstEnd, atMicros: arrivalMicros, minimumSlices: slices))
            }
        }
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        let idle = policy.thresholdMicros(datagrams: datagrams)
        return !flushedSinceData && idle > 0 ? idle : pollMicros
    }

    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if flushedSinceData && nowMicros >= flushMicros + Self.cutUnitHoldMicros { scanner.forgetCutUnit() }
        let idle = policy.thresholdMicros(datagrams: datagrams)
        guard !flushedSinceData, idle > 0, nowMicros >= lastDataMicros + UInt64(idle) else { return }
        if scanner.flush(atMicros: nowMicros, reason: .idle, emit: { emit(.unit($0)) }) { awaitingFlushVerdict = true }
        flushMicros = nowMicros
        emit(.accessUnitEnd(.idleGap, atMicros: nowMicros))
        flushedSinceData = true
    }

    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        scanner.flush(atMicros: nowMicros, reason: .endOfStream) { emit(.unit($0)) }
        emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros))
        flushedSinceData = true
        awaitingFlushVerdict = false
    }

    public mutating func noteAccessUnit(slices: Int) { policy.noteAccessUnit(slices: slices) }

    public mutating func notePictureSplit() { policy.noteSplit() }

    public var counts: [Metric: Int] {
        let k = scanner.counters
        return [.junkBytes: k.junkBytes, .zeroLengthNALUnits: k.zeroLengthUnits, .oversizeNALUnits: k.oversizeUnits,
                .idleFlushes: k.idleFlushes, .cutNALUnits: k.prematureIdleFlushes]
    }
}
