/// H.264 RTP payloads to NAL units (RFC 6184, packetization modes 0 and 1).
///
/// - Single NAL unit packet, types 1...23 (§5.6).
/// - STAP-A, type 24: 16-bit size + NAL unit, repeated (§5.7.1).
/// - FU-A, type 28: FU indicator (F, NRI, 28) + FU header (S, E, R, type); the NAL header is
///   rebuilt from F|NRI and the FU type (§5.8). A fragment that does not continue the unit in
///   progress (lost start, lost middle) damages it: the partial unit is dropped and counted.
/// - STAP-B, MTAP16/24, FU-B (interleaved mode, types 25...27, 29) are counted as unsupported.
public struct H264Depacketizer: PayloadDepacketizer {
    public private(set) var counters = DepacketizerCounters()
    private var fragment: [UInt8] = []
    private var fragmentFirstByte: UInt64 = 0
    private var inFragment = false
    private let maxUnitBytes: Int

    /// - Parameter maxUnitBytes: cap on a reassembled NAL unit (default 16 MiB).
    public init(maxUnitBytes: Int = 16 << 20) { self.maxUnitBytes = maxUnitBytes }

    public mutating func push(_ payload: ArraySlice<UInt8>, arrivalMicros: UInt64, lossBefore: Bool, emit: (NALUnit) -> Void) {
        if lossBefore && inFragment {
            // The unit being reassembled lost a fragment: pass on what arrived, marked damaged,
            // so the decoder can use the start of the slice and conceal the rest.
            emitPartial(emit)
        }
        guard let first = payload.first else { counters.malformed += 1; return }
        let type = first & 0x1F
        switch type {
        case 1...23:
            emit(NALUnit(bytes: Array(payload), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
        case 24:
            var i = payload.startIndex + 1
            while i + 2 <= payload.endIndex {
                let size = Int(payload[i]) << 8 | Int(payload[i + 1])
                i += 2
                guard size > 0, i + size <= payload.endIndex else { counters.malformed += 1; return }
                emit(NALUnit(bytes: Array(payload[i..<(i + size)]), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
                i += size
            }
        case 28:
            guard payload.count >= 2 else { counters.malformed += 1; return }
            let fuHeader = payload[payload.startIndex + 1]
            let start = fuHeader & 0x80 != 0, end = fuHeader & 0x40 != 0
            let body = payload.dropFirst(2)
            if start {
                if inFragment { emitPartial(emit) }   // the previous unit never ended
                fragment.removeAll(keepingCapacity: true)
                fragment.append((first & 0xE0) | (fuHeader & 0x1F))
                fragmentFirstByte = arrivalMicros
                inFragment = true
            } else if !inFragment {
                counters.damagedUnits += 1   // continuation of a unit whose start was lost
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
        if fragment.count > 1 {
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

/// Counters every payload depacketizer keeps.
public struct DepacketizerCounters: Equatable, Sendable, Codable {
    /// NAL units lost or cut by missing fragments.
    public var damagedUnits = 0
    /// Payloads whose lengths do not add up.
    public var malformed = 0
    /// Payload structures not supported (interleaved mode, PACI).
    public var unsupported = 0
    /// Reassembled units over the size cap.
    public var oversizeUnits = 0
}

/// The codec part of RTP depacketization: payloads in order → NAL units.
public protocol PayloadDepacketizer {
    var counters: DepacketizerCounters { get }
    /// Takes the payload of the next packet in sequence order.
    /// - Parameters:
    ///   - lossBefore: packets were lost just before this one (a fragment in progress is damaged).
    ///   - emit: called with each complete NAL unit.
    mutating func push(_ payload: ArraySlice<UInt8>, arrivalMicros: UInt64, lossBefore: Bool, emit: (NALUnit) -> Void)
    /// Forgets a partial unit (sender restart).
    mutating func reset()
    /// True while a fragmented unit is being reassembled.
    var hasPartialUnit: Bool { get }
}
