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
    /// The first slice since the start or a restart is still to come (a join).
    private var joining = true
    private var picture = PictureWatch()

    /// - Parameter settings: codec (`--codec`), SDP (payload type, codec), jitter-buffer window
    ///   (`--reorder-ms`) and idle-flush time.
    public init(settings: DepacketizerSettings = DepacketizerSettings()) {
        rtp = RTPReceiver(codec: settings.codec ?? settings.sdp?.codec, payloadType: settings.sdp?.payloadType,
                          reorderWindowMicros: UInt64(max(0, settings.reorderWindowMicros)),
                          captureExtension: settings.captureExtension ?? settings.sdp?.captureTimeExtension)
        idleFlushMicros = settings.idleFlushMicros > 0 ? max(settings.idleFlushMicros, 50_000) : 0
        reorderWindowMicros = settings.reorderWindowMicros
        session.requestsKeyframes = settings.keyframeRequests
        session.requestsFIRFirst = settings.sdp?.offersFIR ?? false
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
        if truncated {
            emit(.damage(lostPackets: 0))
            session.requestKeyframe(.cut, nowMicros: arrivalMicros)
        }
        session.observeRTP(chunk, arrivalMicros: arrivalMicros)
        let clock = session.clock, codec = rtp.codec
        var seen = Seen(), picture = self.picture
        rtp.push(Array(chunk.bindMemory(to: UInt8.self)), arrivalMicros: arrivalMicros) { e in
            seen.note(e, codec: codec, picture: &picture)
            if let t = Self.translate(e, clock) { emit(t) }
        }
        self.picture = picture
        keyframeBookkeeping(seen, nowMicros: arrivalMicros, emit: emit)
        sendOutgoing(nowMicros: arrivalMicros, emit: emit)
    }

    /// What one push's events said about keyframes.
    private struct Seen {
        var loss = false, restart = false, randomAccess = false, otherSlice = false
        /// A random-access picture ended: true with none of its packets lost, false damaged.
        var randomAccessEnded: Bool?
        mutating func note(_ e: RTPReceiver.Event, codec: VideoCodec?, picture: inout PictureWatch) {
            var randomAccessSlice = false
            switch e {
            case .loss: loss = true
            case .restart: restart = true
            case .unit(let u):
                if let codec, let h = NALUnitHeader(codec: codec, bytes: u.bytes), h.isVCL {
                    randomAccessSlice = h.isRandomAccessPoint
                    if randomAccessSlice { randomAccess = true } else { otherSlice = true }
                }
            default: break
            }
            if let whole = picture.note(e, randomAccessSlice: randomAccessSlice) { randomAccessEnded = whole }
        }
    }

    /// Whether the picture in progress is a random-access point that arrives whole. An IDR that
    /// lost a packet (its own keyframe request's answer, hit by the same loss) leaves the picture
    /// damaged: it must not end the request, or the damage lasts until the next loss or the
    /// sender's next periodic keyframe.
    ///
    /// A loss is the picture's in progress; found after a marker bit ended the last picture, it
    /// is the next picture's (its first packets, or its parameter sets, went missing), as the
    /// access-unit stage counts it.
    struct PictureWatch {
        private var randomAccess = false
        private var damaged = false
        private var inProgress = false

        /// Notes one event in order; when a random-access picture just ended (its marker bit, or
        /// the next picture's first packet when the marker was lost), returns whether it came
        /// whole; nil otherwise. `randomAccessSlice`: the event is an IDR/IRAP slice.
        mutating func note(_ e: RTPReceiver.Event, randomAccessSlice: Bool) -> Bool? {
            switch e {
            case .loss: damaged = true
            case .restart: randomAccess = false; damaged = false; inProgress = false
            case .unit:
                inProgress = true
                if randomAccessSlice { randomAccess = true }
            case .timestamp:
                // A picture still in progress lost its marker; a loss before any of it is its own.
                let ended: Bool? = inProgress && randomAccess ? !damaged : nil
                if inProgress { damaged = false }
                randomAccess = false
                inProgress = true
                return ended
            case .endOfAccessUnit:
                defer { randomAccess = false; damaged = false; inProgress = false }
                return randomAccess ? !damaged : nil
            case .captureTime: break
            }
            return nil
        }
    }

    /// Asks for a keyframe on loss, and on a join (or a sender's restart) at a slice that is no
    /// random-access point; stops once a random-access picture has arrived whole, saying how long
    /// it took, and asks again at once when the answer itself lost a packet.
    private mutating func keyframeBookkeeping(_ seen: Seen, nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if seen.restart { joining = true }
        if seen.loss { session.requestKeyframe(.loss, nowMicros: nowMicros) }
        if seen.randomAccess {
            joining = false
        } else if seen.otherSlice && joining {
            joining = false
            session.requestKeyframe(.join, nowMicros: nowMicros)
        }
        switch seen.randomAccessEnded {
        case true?:
            if let micros = session.randomAccessArrived(nowMicros: nowMicros) { emit(.recovered(afterMicros: micros)) }
        case false?:
            session.randomAccessArrivedDamaged()
        case nil: break
        }
    }

    /// What the RTCP session has for the sender now, and once, that the sender does not answer.
    private mutating func sendOutgoing(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if let out = session.outgoing(nowMicros: nowMicros) { emit(.toSender(out.bytes, keyframeRequest: out.keyframeRequest)) }
        if session.takeSilentSenderNotice() {
            emit(.note("no keyframe came after \(KeyframeRequester.unansweredBeforeNotice) keyframe requests: the sender does not answer them, or they do not reach it; still asking, at most \(KeyframeRequester.maximumPerSecond) a second"))
        }
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
        let clock = session.clock, codec = rtp.codec
        var seen = Seen(), picture = self.picture
        rtp.tick(nowMicros: nowMicros) { e in
            seen.note(e, codec: codec, picture: &picture)
            if let t = Self.translate(e, clock) { emit(t) }
        }
        self.picture = picture
        keyframeBookkeeping(seen, nowMicros: nowMicros, emit: emit)
        sendOutgoing(nowMicros: nowMicros, emit: emit)
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
        case .captureTime(let wall): return .captureTime(wallMicros: wall, source: .rtpExtension)
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
