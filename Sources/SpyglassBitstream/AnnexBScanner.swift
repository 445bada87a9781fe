/// Splits an Annex B byte stream into NAL units, incrementally, across arbitrary cuts.
///
/// Rules (ITU-T H.264 Annex B.2, H.265 Annex B.2): a NAL unit follows a start code
/// `0x00 0x00 0x01` (a 4-byte `0x00 0x00 0x00 0x01` is a zero byte plus the 3-byte code);
/// any number of `trailing_zero_8bits` may precede the next start code, and a NAL unit never
/// ends in `0x00` (§7.4.1), so trailing zeros are stripped. Bytes before the first start code
/// are counted as junk; start codes with nothing between them (zero-length units) are counted
/// and skipped.
///
/// In a byte stream a unit's end is known only when the next start code arrives. A live source
/// also ends the pending unit with ``flush(atMicros:reason:)`` when the input goes idle, so the
/// last unit of a picture is not held until the next picture starts.
public struct AnnexBScanner {
    /// Why a pending unit was closed without a following start code.
    public enum FlushReason: Sendable { case idle, endOfStream }

    /// Counters for what the scanner dropped or repaired.
    public struct Counters: Equatable, Sendable {
        /// Bytes before the first start code, or after an idle cut, that belong to no unit.
        public var junkBytes = 0
        /// Start codes immediately followed by another start code (or the end).
        public var zeroLengthUnits = 0
        /// Units dropped because they exceeded `maxUnitBytes`.
        public var oversizeUnits = 0
        /// Units closed by ``flush(atMicros:reason:)`` on an idle input.
        public var idleFlushes = 0
        /// Idle flushes that turned out to cut a unit: more of it came before any start code.
        public var prematureIdleFlushes = 0
        /// Cut units passed on again whole (``reopensCutUnits``).
        public var reopenedUnits = 0
    }

    /// Largest NAL unit kept, in bytes; a larger one is dropped and counted.
    public let maxUnitBytes: Int
    public private(set) var counters = Counters()

    /// What one ``push(_:arrivalMicros:emit:)`` found besides NAL units.
    public struct PushOutcome: Equatable, Sendable {
        /// Set when these bytes continued a unit that an idle flush had already ended: that unit
        /// went on cut. The value is the cut unit's last-byte arrival time (monotonic µs), which
        /// names it among the units passed on.
        public var cutUnitLastByteMicros: UInt64?
    }
    private var lastIdleFlushedUnitEnd: UInt64 = 0
    private var outcome = PushOutcome()
    /// When bytes continue a unit an idle flush had passed on, reopen it: the bytes join it, and
    /// at its real end it is passed on again, whole, with ``NALUnit/repairs`` naming the cut one.
    /// Off: they are junk, and only the cut is reported.
    public var reopensCutUnits = false
    /// The unit the last idle flush passed on, until the next start code.
    private var flushed: (bytes: [UInt8], strippedZeros: Int, firstByte: UInt64, damaged: Bool, lastByte: UInt64)?
    /// Zero bytes since that flush (they may be the unit's own bytes, or a start code's).
    private var zerosSinceFlush = 0
    /// The reopened unit in progress repairs the cut unit that ended at this time.
    private var repairing: UInt64?
    /// A unit was dropped for its size: the next unit passed on is marked damaged.
    private var damageNextUnit = false

    private var pending: [UInt8] = []
    private var inUnit = false          // a start code has been seen and `pending` belongs to a unit
    private var skipping = false        // the current unit overflowed and is being skipped
    private var zeroRun = 0             // zero bytes at the tail of the input seen so far
    private var firstByteMicros: UInt64 = 0
    private var lastByteMicros: UInt64 = 0
    private var damaged = false
    private var pendingJunk = 0         // bytes outside any unit since the last start code
    private var afterIdleFlush = false  // the last unit was ended by an idle flush

    /// - Parameter maxUnitBytes: cap on one NAL unit, in bytes (default 16 MiB).
    public init(maxUnitBytes: Int = 16 << 20) {
        self.maxUnitBytes = maxUnitBytes
        pending.reserveCapacity(Self.initialCapacity)
    }

    /// The unit buffer's first capacity, bytes (most units of a 1080p stream fit).
    private static let initialCapacity = 64 << 10

    /// Most buffer capacity the scanner keeps between units, bytes (1 MiB: a 4K picture's P
    /// slices fit, and a bigger unit, an IDR or garbage grown to ``maxUnitBytes``, gives its
    /// buffer back once it has gone on). Issue 17: memory after bad input comes back.
    public static let retainedCapacity = 1 << 20

    /// Bytes the scanner holds now: its unit buffer's capacity and the cut unit kept for a repair.
    public var retainedBytes: Int { pending.capacity + (flushed?.bytes.count ?? 0) }

    /// Forgets the unit the last idle flush passed on: bytes that continue it after this are
    /// junk, and it is not reopened (the sender has been gone too long for a pause inside a unit).
    public mutating func forgetCutUnit() {
        flushed = nil
        zerosSinceFlush = 0
    }

    /// Marks the unit now being received as damaged (bytes were lost inside it).
    public mutating func markDamaged() { damaged = true }

    /// Feeds the next bytes of the stream.
    /// - Parameters:
    ///   - chunk: the bytes, in order; any length, including 0.
    ///   - arrivalMicros: monotonic arrival time of the chunk, µs.
    ///   - emit: called with each NAL unit completed by this chunk, in stream order.
    /// - Returns: whether these bytes showed that an idle flush had cut a unit.
    @discardableResult
    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, emit: (NALUnit) -> Void) -> PushOutcome {
        outcome = PushOutcome()
        defer { outcome = PushOutcome() }
        guard !chunk.isEmpty else { return outcome }
        let bytes = chunk.bindMemory(to: UInt8.self)
        var segmentStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == 0 {
                zeroRun += 1
            } else {
                if b == 1 && zeroRun >= 2 {
                    // Start code complete at i. Everything before its zeros ends the pending unit.
                    append(bytes, segmentStart, i + 1, arrivalMicros, endsWithStartCode: true)
                    if inUnit {
                        pending.removeLast(min(pending.count, zeroRun + 1))
                    } else {
                        pendingJunk -= min(pendingJunk, zeroRun + 1)
                    }
                    finishUnit(emit: emit)
                    afterIdleFlush = false
                    flushed = nil
                    zerosSinceFlush = 0
                    inUnit = true
                    skipping = false
                    segmentStart = i + 1
                }
                zeroRun = 0
            }
            i += 1
        }
        append(bytes, segmentStart, n, arrivalMicros)
        return outcome
    }

    /// Convenience for arrays and other contiguous byte collections.
    @discardableResult
    public mutating func push(_ chunk: [UInt8], arrivalMicros: UInt64, emit: (NALUnit) -> Void) -> PushOutcome {
        chunk.withUnsafeBytes { push($0, arrivalMicros: arrivalMicros, emit: emit) }
    }

    /// Ends the pending unit now: at end of stream, or when a live input went idle.
    ///
    /// After an idle flush, bytes that arrive before the next start code continued a unit that
    /// was cut; they are counted as junk and the cut unit was already passed on.
    /// - Parameters:
    ///   - atMicros: monotonic time of the flush, µs (unused for timing the unit: its last byte is kept).
    ///   - reason: idle gap or end of stream.
    ///   - emit: called with the unit, if one was pending.
    /// - Returns: true when an idle flush ended a unit that may still continue (the next bytes
    ///   tell: a start code proves the flush clean, anything else reports a cut).
    @discardableResult
    public mutating func flush(atMicros: UInt64, reason: FlushReason, emit: (NALUnit) -> Void) -> Bool {
        // Trailing zeros may be the beginning of the next start code: keep counting them,
        // but they never belong to this unit (§7.4.1: a NAL unit does not end in 0x00).
        var strip = 0
        while strip < pending.count && pending[pending.count - 1 - strip] == 0 { strip += 1 }
        // No unit in progress (between units, or after a flush that already cut one): a pause
        // ends nothing, and the record of the cut unit stays, so that its rest can still repair
        // it (a second pause after a zero byte that came after the cut forgot it: the rest was
        // dropped as junk and the unit stayed cut).
        if reason == .idle && !inUnit { return false }
        if reason == .idle && inUnit && !skipping && !Self.canEnd(pending.prefix(pending.count - strip)) {
            // Too little of the unit to be a unit: only a start code, or half of an H.265 NAL
            // unit header. Nothing is ended; the rest comes after the pause (a cut here could
            // not be repaired: a unit that cannot be parsed is dropped, not put right).
            return false
        }
        let hadUnit = inUnit && pending.count > strip
        pending.removeLast(strip)
        if hadUnit && reason == .idle {
            counters.idleFlushes += 1
            afterIdleFlush = true
            lastIdleFlushedUnitEnd = lastByteMicros
        }
        let closedIdle = hadUnit && reason == .idle
        let unit = finishUnit(emit: emit)
        flushed = nil
        zerosSinceFlush = 0
        if closedIdle && reopensCutUnits, let unit {
            flushed = (unit.bytes, strip, unit.firstByteMicros, unit.damaged, unit.lastByteMicros)
        }
        inUnit = false
        skipping = false
        if reason == .endOfStream { zeroRun = 0 }
        return closedIdle
    }

    /// Whether the bytes so far can be a whole NAL unit, so that an idle flush may end it: at
    /// least two bytes (an H.265 NAL unit header, ITU-T H.265 §7.3.1.2), or the one byte of an
    /// H.264 end of sequence or end of stream (0x0A, 0x0B: ITU-T H.264 §7.3.1, Table 7-1).
    static func canEnd(_ unit: ArraySlice<UInt8>) -> Bool {
        unit.count >= 2 || (unit.count == 1 && (unit.first == 0x0A || unit.first == 0x0B))
    }

    // MARK: - private

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int, _ arrival: UInt64,
                                 endsWithStartCode: Bool = false) {
        guard to > from else { return }
        if !inUnit {
            // Junk before the first start code (or after an idle cut): counted, not kept.
            // Start-code bytes (zeros and the final 0x01) are not a continuation.
            let content = endsWithStartCode ? from..<(to - 1) : from..<to
            if afterIdleFlush && bytes[content].contains(where: { $0 != 0 }) {
                counters.prematureIdleFlushes += 1
                outcome.cutUnitLastByteMicros = lastIdleFlushedUnitEnd
                afterIdleFlush = false
                if let f = flushed {
                    // More of the unit the flush passed on: it goes on, and is passed on again whole.
                    pendingJunk -= min(pendingJunk, zerosSinceFlush)
                    pending.removeAll(keepingCapacity: true)
                    pending.append(contentsOf: f.bytes)
                    pending.append(contentsOf: repeatElement(0, count: f.strippedZeros + zerosSinceFlush))
                    firstByteMicros = f.firstByte
                    damaged = f.damaged
                    repairing = f.lastByte
                    inUnit = true
                    skipping = false
                    flushed = nil
                    zerosSinceFlush = 0
                    appendToUnit(bytes, from, to, arrival)
                    return
                }
            } else if flushed != nil {
                zerosSinceFlush += to - from
            }
            pendingJunk += (to - from)
            return
        }
        appendToUnit(bytes, from, to, arrival)
    }

    private mutating func appendToUnit(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int, _ arrival: UInt64) {
        if skipping { return }
        if pending.isEmpty { firstByteMicros = arrival }
        lastByteMicros = arrival
        if pending.count + (to - from) > maxUnitBytes {
            counters.oversizeUnits += 1
            clearPending()
            skipping = true
            damaged = false
            // The units after a dropped one are missing it: the next goes on damaged.
            damageNextUnit = true
            return
        }
        pending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<to]))
    }

    /// Passes on the pending unit. Returns it (nil when there was none).
    @discardableResult
    private mutating func finishUnit(emit: (NALUnit) -> Void) -> NALUnit? {
        var out: NALUnit?
        if inUnit && !skipping {
            if pending.isEmpty {
                counters.zeroLengthUnits += 1
            } else {
                // A copy of exactly its bytes: sharing `pending` would pin its whole buffer
                // (64 KiB or more) to every unit, even a 2-byte one, and make the next
                // `removeAll(keepingCapacity:)` allocate a new buffer. `Array(pending)` shares
                // it (measured: a 2-byte unit held 65,544 bytes); a buffer pointer is copied.
                let bytes = pending.withUnsafeBufferPointer { Array($0) }
                var unit = NALUnit(bytes: bytes, firstByteMicros: firstByteMicros,
                                   lastByteMicros: lastByteMicros, damaged: damaged || damageNextUnit)
                damageNextUnit = false
                if let repairing {
                    unit.repairs = repairing
                    counters.reopenedUnits += 1
                }
                emit(unit)
                out = unit
            }
        }
        repairing = nil
        counters.junkBytes += pendingJunk
        pendingJunk = 0
        clearPending()
        damaged = false
        return out
    }

    /// Empties the unit buffer, keeping its capacity up to ``retainedCapacity``.
    private mutating func clearPending() {
        if pending.capacity > Self.retainedCapacity {
            pending = []
            pending.reserveCapacity(Self.initialCapacity)
        } else {
            pending.removeAll(keepingCapacity: true)
        }
    }
}
