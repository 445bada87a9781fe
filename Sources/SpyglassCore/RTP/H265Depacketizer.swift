/// H.265 RTP payloads to NAL units (RFC 7798), without DONL fields (sprop-max-don-diff 0).
///
/// - Single NAL unit packet: any type up to 47 (§4.4.1).
/// - Aggregation packet (AP), type 48: 16-bit size + NAL unit, repeated (§4.4.2).
/// - Fragmentation unit (FU), type 49: 2-byte payload header + FU header (S, E, type 6 bits);
///   the NAL header is the payload header with the FU type put back (§4.4.3).
/// - PACI, type 50, is counted as unsupported.
public struct H265Depacketizer: PayloadDepacketizer {
    public private(set) var counters = DepacketizerCounters()
    private var fragment: [UInt8] = []
    private var fragmentFirstByte: UInt64 = 0
    private var inFragment = false
    private let maxUnitBytes: Int

    /// - Parameter maxUnitBytes: cap on a reassembled NAL unit (default 16 MiB).
    public init(maxUnitBytes: Int = 16 << 20) { self.maxUnitBytes = maxUnitBytes }

    public mutating func push(_ payload: ArraySlice<UInt8>, arrivalMicros: UInt64, lossBefore: Bool, emit: (NALUnit) -> Void) {
        if lossBefore && inFragment {
            // A fragment was lost: pass on what arrived, marked damaged (the decoder conceals the rest).
            emitPartial(emit)
        }
        guard payload.count >= 2 else { counters.malformed += 1; return }
        let s = payload.startIndex
        let type = (payload[s] >> 1) & 0x3F
        switch type {
        case 0...47:
            emit(NALUnit(bytes: Array(payload), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
        case 48:
            var i = s + 2
            while i + 2 <= payload.endIndex {
                let size = Int(payload[i]) << 8 | Int(payload[i + 1])
                i += 2
                guard size >= 2, i + size <= payload.endIndex else { counters.malformed += 1; return }
                emit(NALUnit(bytes: Array(payload[i..<(i + size)]), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
                i += size
            }
        case 49:
            guard payload.count >= 3 else { counters.malformed += 1; return }
            let fu = payload[s + 2]
            let start = fu & 0x80 != 0, end = fu & 0x40 != 0
            let body = payload.dropFirst(3)
            if start {
                if inFragment { emitPartial(emit) }   // the previous unit never ended
                fragment.removeAll(keepingCapacity: true)
                fragment.append((payload[s] & 0x81) | ((fu & 0x3F) << 1))
                fragment.append(payload[s + 1])
                fragmentFirstByte = arrivalMicros
                inFragment = true
            } else if !inFragment {
                counters.damagedUnits += 1
                return
            }
            guard fragment.count + body.count <= maxUnitBytes else {
                counters.oversizeUnits += 1
                inFragment = false
                fragment.removeAll(keepingCapacity: true)
                return
            }
            fragment += body
            if end {
                inFragment = false
                emit(NALUnit(bytes: fragment, firstByteMicros: fragmentFirstByte, lastByteMicros: arrivalMicros))
                fragment.removeAll(keepingCapacity: true)
            }
        default:
            counters.unsupported += 1
        }
    }

    private mutating func emitPartial(_ emit: (NALUnit) -> Void) {
        counters.damagedUnits += 1
        if fragment.count > 2 {
            emit(NALUnit(bytes: fragment, firstByteMicros: fragmentFirstByte, lastByteMicros: fragmentFirstByte, damaged: true))
        }
        inFragment = false
        fragment.removeAll(keepingCapacity: true)
    }

    public mutating func reset() {
        inFragment = false
        fragment.removeAll(keepingCapacity: true)
    }

    public var hasPartialUnit: Bool { inFragment }
}
