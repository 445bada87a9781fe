/// RTP over UDP (RFC 3550) carrying H.264 (RFC 6184) or H.265 (RFC 7798): ``RTPReceiver`` behind
/// the depacketizer seam.
///
/// The marker bit ends each access unit exactly (RFC 6184 §5.1, RFC 7798 §4.1). An idle flush
/// of at least 50 ms is only the last resort for a marker lost at the end of a burst.
public struct RTPStreamDepacketizer: Depacketizer {
    public var name: String { "rtp" }
    private var rtp: RTPReceiver
    private let idleFlushMicros: Int
    private let reorderWindowMicros: Int
    private var flushedSinceData = true
    private var lastDataMicros: UInt64 = 0

    /// - Parameter options: codec (`--codec`), SDP (payload type, codec), jitter-buffer window
    ///   (`--reorder-ms`) and idle-flush time.
    public init(options: ReceiverOptions) {
        rtp = RTPReceiver(codec: options.codec ?? options.sdp?.codec, payloadType: options.sdp?.payloadType,
                          reorderWindowMicros: UInt64(max(0, options.reorderWindowMicros)))
        idleFlushMicros = options.idleFlushMicros > 0 ? max(options.idleFlushMicros, 50_000) : 0
        reorderWindowMicros = options.reorderWindowMicros
    }

    public var codec: VideoCodec? { rtp.codec }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        lastDataMicros = arrivalMicros
        flushedSinceData = false
        if truncated { emit(.damage(lostPackets: 0)) }
        rtp.push(Array(chunk.bindMemory(to: UInt8.self)), arrivalMicros: arrivalMicros) { emit(Self.translate($0)) }
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        var timeout = !flushedSinceData && idleFlushMicros > 0 ? idleFlushMicros : pollMicros
        // A jitter buffer releases held packets on time, not on the next poll.
        if reorderWindowMicros > 0 { timeout = min(timeout, max(500, reorderWindowMicros / 4)) }
        return timeout
    }

    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        rtp.tick(nowMicros: nowMicros) { emit(Self.translate($0)) }
        if !flushedSinceData && idleFlushMicros > 0 && nowMicros >= lastDataMicros + UInt64(idleFlushMicros) {
            emit(.accessUnitEnd(.idleGap, atMicros: nowMicros))
            flushedSinceData = true
        }
    }

    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        rtp.tick(nowMicros: UInt64.max / 2) { emit(Self.translate($0)) }
        emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros))
        flushedSinceData = true
    }

    private static func translate(_ e: RTPReceiver.Event) -> DepacketizerEvent {
        switch e {
        case .unit(let u): return .unit(u)
        case .endOfAccessUnit(let at): return .accessUnitEnd(.markerBit, atMicros: at)
        case .loss(let n): return .damage(lostPackets: n)
        case .restart(let reason): return .restart(reason: reason)
        }
    }

    public var counts: [Metric: Int] {
        let r = rtp.counters
        return [.rtpPackets: r.packets, .notRTP: r.notRTP + r.otherPayloadType, .packetsLost: r.sequence.lost,
                .packetsReordered: r.sequence.reordered, .packetsDuplicated: r.sequence.duplicates,
                .ssrcChanges: r.sequence.ssrcChanges,
                .damagedNALUnits: r.payload.damagedUnits, .oversizeNALUnits: r.payload.oversizeUnits,
                .malformedPayloads: r.payload.malformed + r.payload.unsupported]
    }
}
