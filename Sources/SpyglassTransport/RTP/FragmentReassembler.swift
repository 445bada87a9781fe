/// Rebuilds one NAL unit from fragmentation units: H.264 FU-A (RFC 6184 §5.8) and H.265 FU
/// (RFC 7798 §4.4.3) work the same way once the codec has rebuilt the NAL unit header.
///
/// A unit that loses a fragment (a gap before a continuation, or a new start before the end)
/// is passed on with what arrived, marked damaged, so the decoder can use its start and
/// conceal the rest. A continuation whose start was lost is dropped. Units over the size cap
/// are dropped. Every such case is counted once per unit: the fragments that still come of a
/// unit given up (lost start, loss, size) are dropped without being counted again, up to its
/// end fragment or the next start.
import SpyglassBitstream
struct FragmentReassembler {
    private var bytes: [UInt8] = []
    private var firstByteMicros: UInt64 = 0
    private var lastByteMicros: UInt64 = 0
    /// The rest of a unit already given up and counted is being dropped.
    private var skipping = false
    private let headerSize: Int
    private let maxUnitBytes: Int
    /// True while a unit is being rebuilt.
    public private(set) var active = false

    /// - Parameters:
    ///   - headerSize: NAL unit header bytes (1 for H.264, 2 for H.265).
    ///   - maxUnitBytes: cap on the rebuilt unit.
    init(headerSize: Int, maxUnitBytes: Int) {
        self.headerSize = headerSize
        self.maxUnitBytes = maxUnitBytes
    }

    /// Takes one fragment.
    /// - Parameters:
    ///   - header: the rebuilt NAL unit header (used when `start`).
    ///   - body: the fragment's payload after the FU headers.
    mutating func push(header: [UInt8], body: ArraySlice<UInt8>, start: Bool, end: Bool, arrivalMicros: UInt64,
                       counters: inout DepacketizerCounters, emit: (NALUnit) -> Void) {
        if start {
            if active { abandon(counters: &counters, emit: emit) }   // the previous unit never ended
            bytes.removeAll(keepingCapacity: true)
            bytes += header
            firstByteMicros = arrivalMicros
            lastByteMicros = arrivalMicros
            active = true
            skipping = false
        } else if !active {
            if !skipping { counters.damagedUnits += 1 }               // its start was lost
            skipping = !end
            return
        }
        guard bytes.count + body.count <= maxUnitBytes else {
            counters.oversizeUnits += 1
            reset()
            skipping = !end
            return
        }
        bytes += body
        lastByteMicros = arrivalMicros
        if end {
            emit(NALUnit(bytes: bytes, firstByteMicros: firstByteMicros, lastByteMicros: arrivalMicros))
            reset()
        }
    }

    /// A fragment was lost: pass on what arrived, marked damaged.
    mutating func abandon(counters: inout DepacketizerCounters, emit: (NALUnit) -> Void) {
        guard active else { return }
        counters.damagedUnits += 1
        if bytes.count > headerSize {
            emit(NALUnit(bytes: bytes, firstByteMicros: firstByteMicros, lastByteMicros: lastByteMicros, damaged: true))
        }
        reset()
        skipping = true
    }

    /// A packet that is not a fragment came: the unit being skipped is over (whatever of it
    /// remained was lost), so a later continuation without a start is a new unit to count.
    mutating func notePacketBetweenUnits() { skipping = false }

    /// Forgets the unit in progress (and any unit being skipped).
    mutating func reset() {
        active = false
        skipping = false
        bytes.removeAll(keepingCapacity: true)
    }
}
