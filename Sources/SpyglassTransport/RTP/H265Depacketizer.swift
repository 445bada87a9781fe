/// H.265 RTP payloads to NAL units (RFC 7798), without DONL fields (sprop-max-don-diff 0).
///
/// - Single NAL unit packet: any type up to 47 (§4.4.1).
/// - Aggregation packet (AP), type 48: 16-bit size + NAL unit, repeated (§4.4.2).
/// - Fragmentation unit (FU), type 49: 2-byte payload header + FU header (S, E, type 6 bits);
///   the NAL header is the payload header with the FU type put back (§4.4.3).
/// - PACI, type 50, is counted as unsupported.
import SpyglassBitstream
public struct H265Depacketizer: PayloadDepacketizer {
    public private(set) var counters = DepacketizerCounters()
    private var fragments: FragmentReassembler

    /// - Parameter maxUnitBytes: cap on a reassembled NAL unit (default 16 MiB).
    public init(maxUnitBytes: Int = 16 << 20) {
        fragments = FragmentReassembler(headerSize: 2, maxUnitBytes: maxUnitBytes)
    }

    public mutating func abandonPartialUnit(emit: (NALUnit) -> Void) { fragments.abandon(counters: &counters, emit: emit) }

    public mutating func push(_ payload: ArraySlice<UInt8>, arrivalMicros: UInt64, lossBefore: Bool, emit: (NALUnit) -> Void) {
        if lossBefore { fragments.abandon(counters: &counters, emit: emit) }
        guard payload.count >= 2 else { counters.malformed += 1; return }
        let s = payload.startIndex
        let type = (payload[s] >> 1) & 0x3F
        if type != 49 { fragments.notePacketBetweenUnits() }
        switch type {
        case 0...47:
            emit(NALUnit(bytes: Array(payload), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
        case 48:
            if !AggregationPacket.split(payload.dropFirst(2), minUnitBytes: 2, arrivalMicros: arrivalMicros, emit: emit) {
                counters.malformed += 1
            }
        case 49:
            guard payload.count >= 3 else { counters.malformed += 1; return }
            let fu = payload[s + 2]
            // §4.4.3: "the Start bit and End bit must not both be set to 1" (ffmpeg drops it too).
            guard fu & 0xC0 != 0xC0 else { counters.malformed += 1; return }
            // NAL header = the payload header with the FU's type put back.
            fragments.push(header: [(payload[s] & 0x81) | ((fu & 0x3F) << 1), payload[s + 1]], body: payload.dropFirst(3),
                           start: fu & 0x80 != 0, end: fu & 0x40 != 0, arrivalMicros: arrivalMicros,
                           counters: &counters, emit: emit)
        default:
            counters.unsupported += 1
        }
    }

    public mutating func reset() { fragments.reset() }

    public var hasPartialUnit: Bool { fragments.active }
}
