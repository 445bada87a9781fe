/// RTP over UDP to NAL units: the generic RTP part (``SequenceTracker``, ``ReorderBuffer``),
/// then the codec's payload rules (``H264Depacketizer``, ``H265Depacketizer``).
///
/// The codec it is given (an SDP's `a=rtpmap`, or `--codec`) is where the payload rules start,
/// not a promise: a payload whose first unit is a parameter set of the other codec
/// (``RTPCodecDetector/decisiveParameterSet(_:)``) switches them, since the RFC 6184 and RFC 7798
/// aggregation and fragmentation layouts differ and the wrong ones give no picture at all. What
/// the decoder is told stays with ``AccessUnitStage``, where `--codec` is authoritative.
import SpyglassBitstream
public struct RTPReceiver {
    /// What came out of one datagram.
    public enum Event {
        /// A complete NAL unit.
        case unit(NALUnit)
        /// The marker bit: the access unit in progress is complete (RFC 6184 §5.1, RFC 7798 §4.1).
        case endOfAccessUnit(atMicros: UInt64)
        /// The first packet of a new RTP timestamp (a new picture) of stream `ssrc`, before its units.
        case timestamp(UInt32, ssrc: UInt32)
        /// The picture's capture time from a header extension (``CaptureTimeExtension``), µs
        /// since the Unix epoch: after its ``timestamp(_:ssrc:)``, once per picture.
        case captureTime(wallMicros: UInt64)
        /// Packets were lost: the access unit in progress is damaged.
        case loss(packets: Int)
        /// A new sender (SSRC change or sequence reset): start over.
        case restart(reason: String)
    }

    /// Counters for the summary.
    public struct Counters: Equatable, Sendable, Codable {
        /// RTP packets of the accepted payload type.
        public var packets = 0
        /// Datagrams that were not RTP version 2 (RFC 3550 §5.1), dropped.
        public var notRTP = 0
        /// RTP packets of another payload type, dropped.
        public var otherPayloadType = 0
        /// Loss, reordering, duplicates, restarts and SSRC changes (``SequenceTracker``), with the
        /// jitter buffer's put-back packets in `reordered`.
        public var sequence = SequenceTracker.Counters()
        /// What the payload rules counted (damaged, malformed, unsupported, oversize units).
        public var payload = DepacketizerCounters()
        /// Times a parameter set of the other codec switched the payload rules (a wrong SDP,
        /// or a sender that changed codec).
        public var codecSwitches = 0
        /// Packets of a second SSRC dropped while the established sender kept sending
        /// (``SSRCProbation``, RFC 3550 §A.1).
        public var strayPackets = 0
    }

    /// The codec whose payload rules are in use (nil until detected).
    public private(set) var codec: VideoCodec?
    /// Payload type to accept (nil: the first dynamic one seen).
    public private(set) var payloadType: UInt8?
    private let payloadTypeGiven: Bool
    private var otherType: UInt8 = 0
    private var otherRun = 0
    private var detector = RTPCodecDetector()
    private var held: [([UInt8], UInt64)] = []
    private var tracker = SequenceTracker()
    private var probation = SSRCProbation<(RTPPacket, UInt64)>()
    private var reorder: ReorderBuffer
    private var depacketizer: (any PayloadDepacketizer)?
    private var counts = Counters()
    private var lastSSRC: UInt32?
    private let codecGiven: Bool
    private var redetect = false
    private var pastPayload = DepacketizerCounters()
    private var lastTimestamp: UInt32?
    private var lastHadMarker = true
    /// The header extension that carries capture times, if the session has one.
    private let captureExtension: CaptureTimeExtension?
    /// The picture in progress already has its capture time from the extension.
    private var captureNoted = false

    /// - Parameters:
    ///   - codec: the codec to start with (from `--codec` or an SDP), or nil to detect it. A
    ///     parameter set of the other codec still switches the payload rules.
    ///   - payloadType: known payload type (from an SDP), or nil.
    ///   - reorderWindowMicros: jitter-buffer wait for a missing packet (0 = none).
    ///   - captureExtension: the header extension (and its id) that carries capture times, from
    ///     the SDP's `a=extmap` or `--rtp-ext` (nil: none is read).
    public init(codec: VideoCodec?, payloadType: UInt8? = nil, reorderWindowMicros: UInt64 = 0,
                captureExtension: CaptureTimeExtension? = nil) {
        self.captureExtension = captureExtension
        self.codec = codec
        self.codecGiven = codec != nil
        self.payloadType = payloadType
        payloadTypeGiven = payloadType != nil
        self.reorder = ReorderBuffer(windowMicros: reorderWindowMicros)
        if let codec { depacketizer = Self.make(codec) }
    }

    private static func make(_ codec: VideoCodec) -> any PayloadDepacketizer {
        codec == .h264 ? H264Depacketizer() : H265Depacketizer()
    }

    /// Everything counted so far (monotonic, across payload-rule switches).
    public var counters: Counters {
        var c = counts
        c.sequence = tracker.counters
        let now = depacketizer?.counters ?? DepacketizerCounters()
        c.payload = DepacketizerCounters(damagedUnits: pastPayload.damagedUnits + now.damagedUnits,
                                         malformed: pastPayload.malformed + now.malformed,
                                         unsupported: pastPayload.unsupported + now.unsupported,
                                         oversizeUnits: pastPayload.oversizeUnits + now.oversizeUnits)
        c.sequence.reordered += reorder.putBackInOrder
        c.strayPackets = probation.strayPackets
        return c
    }

    /// Takes one datagram.
    public mutating func push(_ datagram: [UInt8], arrivalMicros: UInt64, emit: (Event) -> Void) {
        if codec == nil {
            guard let p = try? RTPPacket(datagram: datagram[...]) else { counts.notRTP += 1; return }
            held.append((datagram, arrivalMicros))
            if held.count > 256 { held.removeFirst() }
            if let c = detector.observe(p.payload) { redetected(c, emit: emit) }
            return
        }
        process(datagram, arrivalMicros: arrivalMicros, emit: emit)
    }

    private mutating func switchDepacketizer(to c: VideoCodec) {
        if let old = depacketizer?.counters {
            pastPayload.damagedUnits += old.damagedUnits
            pastPayload.malformed += old.malformed
            pastPayload.unsupported += old.unsupported
            pastPayload.oversizeUnits += old.oversizeUnits
        }
        codec = c
        depacketizer = Self.make(c)
    }

    private mutating func redetected(_ c: VideoCodec, emit: (Event) -> Void) {
        codec = c
        depacketizer = Self.make(c)
        let replay = held
        held.removeAll()
        for (d, t) in replay { process(d, arrivalMicros: t, emit: emit) }
    }

    /// Releases packets the reorder window no longer waits for.
    public mutating func tick(nowMicros: UInt64, emit: (Event) -> Void) {
        admitted(probation.tick(nowMicros: nowMicros), emit: emit)
        for (p, t) in reorder.release(now: nowMicros) { handle(p, arrivalMicros: t, emit: emit) }
    }

    /// Something waits for time to pass (a jitter buffer, a new SSRC on probation).
    public var isWaiting: Bool { probation.isHolding }

    /// The input ended: everything the jitter buffer holds goes on; packets of a new SSRC still
    /// on probation are counted as stray.
    public mutating func finish(emit: (Event) -> Void) {
        probation.finish()
        for (p, t) in reorder.drain() { handle(p, arrivalMicros: t, emit: emit) }
    }

    private mutating func process(_ datagram: [UInt8], arrivalMicros: UInt64, emit: (Event) -> Void) {
        guard let p = try? RTPPacket(datagram: datagram[...]) else { counts.notRTP += 1; return }
        if payloadType == nil, (96...127).contains(p.payloadType) { payloadType = p.payloadType }
        guard p.payloadType == payloadType else {
            counts.otherPayloadType += 1
            // A payload type taken from one stray packet is not a lock: when another dynamic one
            // keeps coming (and none of ours), follow it. One from an SDP stays.
            if !payloadTypeGiven, (96...127).contains(p.payloadType) {
                otherRun = p.payloadType == otherType ? otherRun + 1 : 1
                otherType = p.payloadType
                if otherRun >= 30 {
                    payloadType = p.payloadType
                    otherRun = 0
                    probation.forgetEstablished()   // the SSRC learned with the stray type was the stray's
                }
            }
            return
        }
        otherRun = 0
        counts.packets += 1
        admitted(probation.admit((p, arrivalMicros), ssrc: p.ssrc, arrivalMicros: arrivalMicros), emit: emit)
    }

    /// Packets past the SSRC probation, into the jitter buffer.
    private mutating func admitted(_ packets: [(RTPPacket, UInt64)], emit: (Event) -> Void) {
        for (p, arrival) in packets {
            if let last = lastSSRC, last != p.ssrc {
                // A new SSRC has sequence numbers of its own: what the jitter buffer holds of the old
                // one goes on first, in order (it used to be dropped uncounted), then it starts over.
                for (q, t) in reorder.drain() { handle(q, arrivalMicros: t, emit: emit) }
            }
            lastSSRC = p.ssrc
            for (q, t) in reorder.push(p, arrivalMicros: arrival) { handle(q, arrivalMicros: t, emit: emit) }
        }
    }

    private mutating func handle(_ p: RTPPacket, arrivalMicros: UInt64, emit: (Event) -> Void) {
        var lossBefore = false
        switch tracker.observe(ssrc: p.ssrc, sequenceNumber: p.sequenceNumber) {
        case .drop:
            return
        case .restart:
            depacketizer?.reset()
            emit(.restart(reason: String(format: "sender restart (SSRC %08x, sequence %d)", p.ssrc, p.sequenceNumber)))
            // A new sender may use the other codec: the next decisive payload tells (no replay of
            // held packets, so stray packets from several senders cannot start a restart loop).
            if !codecGiven { redetect = true }
        case .accept(let gap):
            if gap > 0 {
                lossBefore = true
                emit(.loss(packets: gap))
                // The cut unit belongs to the picture before the gap: it must go out before this
                // packet can end that picture and begin the next (a cut slice of the last picture
                // went into the next one, often the IDR that a keyframe request had asked for).
                if var d = depacketizer.take() {
                    d.abandonPartialUnit { emit(.unit($0)) }
                    depacketizer = d
                }
            }
        }
        // A new RTP timestamp is a new picture: the previous one ended even if its marker was lost.
        if let last = lastTimestamp, last != p.timestamp, !lastHadMarker {
            emit(.endOfAccessUnit(atMicros: arrivalMicros))
        }
        if lastTimestamp != p.timestamp || lastHadMarker {
            emit(.timestamp(p.timestamp, ssrc: p.ssrc))
            captureNoted = false
        }
        // Senders put it on the picture's first packet (GStreamer) or on every one: the first
        // packet that has it gives it, once.
        if !captureNoted, let x = captureExtension, let e = p.headerExtension, let wall = x.captureWallMicros(in: e) {
            emit(.captureTime(wallMicros: wall))
            captureNoted = true
        }
        lastTimestamp = p.timestamp
        lastHadMarker = p.marker
        if redetect, let c = RTPCodecDetector.decisive(p.payload) {
            redetect = false
            if c != codec { switchDepacketizer(to: c); counts.codecSwitches += 1 }
        }
        // The SDP (or --codec) named the other codec, or the sender changed codec without a new
        // SSRC: a parameter set says which payload rules the stream really follows.
        if let c = RTPCodecDetector.decisiveParameterSet(p.payload), c != codec {
            switchDepacketizer(to: c)
            counts.codecSwitches += 1
        }
        // Moved out and back, never copied: a copy would duplicate the unit being reassembled on
        // every fragment (quadratic in the unit's size).
        guard var d = depacketizer.take() else { return }
        d.push(p.payload, arrivalMicros: arrivalMicros, lossBefore: lossBefore) { emit(.unit($0)) }
        depacketizer = d
        if p.marker { emit(.endOfAccessUnit(atMicros: arrivalMicros)) }
    }
}
