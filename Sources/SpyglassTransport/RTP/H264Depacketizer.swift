/// H.264 RTP payloads to NAL units (RFC 6184, packetization modes 0 and 1).
///
/// - Single NAL unit packet, types 1...23 (§5.6).
/// - STAP-A, type 24: 16-bit size + NAL unit, repeated (§5.7.1).
/// - FU-A, type 28: FU indicator (F, NRI, 28) + FU header (S, E, R, type); the NAL header is
///   rebuilt from F|NRI and the FU type (§5.8); see ``FragmentReassembler`` for lost fragments.
/// - STAP-B, MTAP16/24, FU-B (interleaved mode, types 25...27, 29) are counted as unsupported.
import SpyglassBitstream
public struct H264Depacketizer: PayloadDepacketizer {
    public private(set) var counters = DepacketizerCounters()
    private var fragments: FragmentReassembler

    /// - Parameter maxUnitBytes: cap on a reassembled NAL unit (default 16 MiB).
    public init(maxUnitBytes: Int = 16 << 20) {
        fragments = FragmentReassembler(headerSize: 1, maxUnitBytes: maxUnitBytes)
    }

    public mutating func abandonPartialUnit(emit: (NALUnit) -> Void) { fragments.abandon(counters: &counters, emit: emit) }

    public mutating func push(_ payload: ArraySlice<UInt8>, arrivalMicros: UInt64, lossBefore: Bool, emit: (NALUnit) -> Void) {
        if lossBefore { fragments.abandon(counters: &counters, emit: emit) }
        guard let first = payload.first else { counters.malformed += 1; return }
        if first & 0x1F != 28 { fragments.notePacketBetweenUnits() }
        switch first & 0x1F {
        case 1...23:
            emit(NALUnit(bytes: Array(payload), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
        case 24:
            if !AggregationPacket.split(payload.dropFirst(), minUnitBytes: 1, arrivalMicros: arrivalMicros, emit: emit) {
                counters.malformed += 1
            }
        case 28:
            guard payload.count >= 2 else { counters.malformed += 1; return }
            let fu = payload[payload.startIndex + 1]
            // NAL header = F|NRI from the FU indicator + type from the FU header.
            fragments.push(header: [(first & 0xE0) | (fu & 0x1F)], body: payload.dropFirst(2),
                           start: fu & 0x80 != 0, end: fu & 0x40 != 0, arrivalMicros: arrivalMicros,
                           counters: &counters, emit: emit)
        default:
            counters.unsupported += 1
        }
    }

    public mutating func reset() { fragments.reset() }

    public var hasPartialUnit: Bool { fragments.active }
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
    /// Packets were lost: the fragmented unit in progress, if any, goes on cut (marked damaged),
    /// before anything of the packet after the gap (which may begin a new picture).
    mutating func abandonPartialUnit(emit: (NALUnit) -> Void)
    /// Forgets a partial unit (sender restart).
    mutating func reset()
    /// True while a fragmented unit is being reassembled.
    var hasPartialUnit: Bool { get }
}
