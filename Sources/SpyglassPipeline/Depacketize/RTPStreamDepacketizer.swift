/// RTP over UDP (RFC 3550) carrying H.264 (RFC 6184) or H.265 (RFC 7798): ``RTPReceiver`` behind
/// the depacketizer seam.
///
/// The marker bit ends each access unit exactly (RFC 6184 §5.1, RFC 7798 §4.1). An idle flush
/// of at least 50 ms is only the last resort for a marker lost at the end of a burst.
///
/// RTCP arrives in band (the source passes on what its RTCP port or channel received; RFC 5761
/// §4 tells the two apart) and goes to the stream's ``RTCPSession``: its sender reports set the
/// sender's clock, and from then on every access unit gets a capture time from its RTP timestamp
/// (``DepacketizerEvent/captureTime(wallMicros:source:)``). What the session has for the sender
/// (receiver reports) comes out as ``DepacketizerEvent/toSender(_:)``.
import SpyglassBitstream
import SpyglassTransport
public struct RTPStreamDepacketizer: Depacketizer {
    public var framing: Framing? { .rtp }
    private var rtp: RTPReceiver
    private let idleFlushMicros: Int
    private let reorderWindowMicros: Int
    private var flushedSinceData = true
    private var lastDataMicros: UInt64 = 0
    private var session = RTCPSession()

    /// - Parameter settings: codec (`--codec`), SDP (payload type, codec), jitter-buffer window
    ///   (`--reorder-ms`) and idle-flush time.
    public init(settings: DepacketizerSettings = DepacketizerSettings()) {
        rtp = RTPReceiver(codec: settings.codec ?? settings.sdp?.codec, payloadType: settings.sdp?.payloadType,
                          reorderWindowMicros: UInt64(max(0, settings.reorderWindowMicros)))
        idleFlushMicros = settings.idleFlushMicros > 0 ? max(settings.idleFlushMicros, 50_000) : 0
        reorderWindowMicros = settings.reorderWindowMicros
    }

    public var codec: VideoCodec? { rtp.codec }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        if RTCPPacket.looksLikeRTCP(chunk) {
            session.receive(chunk, arrivalMicros: arrivalMicros)
            return
        }
        lastDataMicros = arrivalMicros
        flushedSinceData = false
        if truncated { emit(.damage(lostPackets: 0)) }
        session.observeRTP(chunk, arrivalMicros: arrivalMicros)
        let clock = session.clock
        rtp.push(Array(chunk.bindMemory(to: UInt8.self)), arrivalMicros: arrivalMicros) { e in
            if let t = Self.translate(e, clock) { emit(t) }
        }
        if let packet = session.outgoing(nowMicros: arrivalMicros) { emit(.toSender(packet)) }
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        var timeout = !flushedSinceData && idleFlushMicros > 0 ? idleFlushMicros : pollMicros
        // A jitter buffer releases held packets on time, not on the next poll.
        if reorderWindowMicros > 0 { timeout = min(timeout, max(500, reorderWindowMicros / 4)) }
        // A new SSRC on probation takes over on time once the old sender has been silent.
        if rtp.isWaiting { timeout = min(timeout, 10_000) }
        return timeout
    }

    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if let packet = session.outgoing(nowMicros: nowMicros) { emit(.toSender(packet)) }
        let clock = session.clock
        rtp.tick(nowMicros: nowMicros) { e in if let t = Self.translate(e, clock) { emit(t) } }
        if !flushedSinceData && idleFlushMicros > 0 && nowMicros >= lastDataMicros + UInt64(idleFlushMicros) {
            emit(.accessUnitEnd(.idleGap, atMicros: nowMicros))
            flushedSinceData = true
        }
    }

    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        let clock = session.clock
        rtp.finish { e in if let t = Self.translate(e, clock) { emit(t) } }
        emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros))
        flushedSinceData = true
    }

    private static func translate(_ e: RTPReceiver.Event, _ clock: SenderClock) -> DepacketizerEvent? {
        switch e {
        case .timestamp(let t, let ssrc):
            return clock.wallMicros(rtpTimestamp: t, ssrc: ssrc).map { .captureTime(wallMicros: $0, source: .rtcp) }
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
                .ssrcChanges: r.sequence.ssrcChanges, .strayPackets: r.strayPackets,
                .damagedNALUnits: r.payload.damagedUnits, .oversizeNALUnits: r.payload.oversizeUnits,
                .malformedPayloads: r.payload.malformed + r.payload.unsupported,
                .rtcpPackets: session.counts.packets, .senderReports: session.counts.senderReports,
                .malformedRTCP: session.counts.malformed]
    }
}
