/// One RTP stream's RTCP session, as a receiver (RFC 3550 §6): the one place where RTCP is
/// parsed, the sender's clock is kept and what goes back to the sender is made.
///
/// - Each compound packet that arrives is parsed once (``RTCPPacket/parts(of:)``): its sender
///   reports set the ``SenderClock`` (capture times from RTP timestamps) and the LSR/DLSR echo
///   of the next receiver report; a malformed one is counted and dropped.
/// - Every RTP packet delivered is noted for the reception statistics (§6.4.2, Appendix A).
/// - ``outgoing(nowMicros:)`` gives what is due for the sender: a compound RR + SDES every 2 s
///   once RTP flows. Whoever owns the way back (a UDP socket to the sender's RTCP address, an
///   RTSP server's RTCP port or interleaved channel 1) sends it.
///
/// Used by plain RTP over UDP, RTSP over UDP and RTSP interleaved alike: the depacketizer owns
/// the session, the source only carries bytes both ways. A value type, on the feed's thread.
public struct RTCPSession: Sendable {
    /// What the session counted (monotonic).
    public struct Counts: Equatable, Sendable {
        /// Compound RTCP packets received, malformed ones included.
        public var packets = 0
        /// Sender reports among them.
        public var senderReports = 0
        /// Packets that did not parse (RFC 3550 §6.1 lengths or version), dropped.
        public var malformed = 0

        public init() {}
    }

    /// What was counted so far.
    public private(set) var counts = Counts()
    /// Keyframe requests (PLI, RFC 4585 §6.3.1): what is asked for, and what was sent.
    public private(set) var keyframes = KeyframeRequester()
    /// Whether to send keyframe requests at all (`--keyframe-requests`).
    public var requestsKeyframes = true
    /// The sender's wall clock for its RTP timestamps (from its latest sender report).
    public private(set) var clock: SenderClock
    private var reporter: ReceiverReporter

    /// - Parameters:
    ///   - ssrc: our SSRC in the reports (random by default, RFC 3550 §8.1).
    ///   - clockRate: the stream's RTP clock, Hz (90 kHz for video and MPEG-TS).
    public init(ssrc: UInt32 = UInt32.random(in: 1...UInt32.max), clockRate: Int64 = 90_000) {
        clock = SenderClock(clockRate: clockRate)
        reporter = ReceiverReporter(ssrc: ssrc)
    }

    /// Our SSRC, as the sender sees it in our reports.
    public var ssrc: UInt32 { reporter.ssrc }

    /// Takes one compound RTCP packet from the sender.
    /// - Parameters:
    ///   - packet: one datagram from the RTCP port, or one frame of interleaved channel 1.
    ///   - arrivalMicros: monotonic arrival, µs.
    /// - Returns: its parts, or nil when it was malformed (counted).
    @discardableResult
    public mutating func receive(_ packet: UnsafeRawBufferPointer, arrivalMicros: UInt64) -> [RTCPPacket.Part]? {
        counts.packets += 1
        guard let parts = try? RTCPPacket.parts(of: packet) else { counts.malformed += 1; return nil }
        for case .senderReport(let sr) in parts {
            counts.senderReports += 1
            clock.take(sr)
            reporter.observe(sr, arrivalMicros: arrivalMicros)
        }
        return parts
    }

    /// Notes one RTP packet of the stream (only its fixed header is read).
    /// - Parameters:
    ///   - packet: the RTP packet as received.
    ///   - arrivalMicros: monotonic arrival, µs.
    public mutating func observeRTP(_ packet: UnsafeRawBufferPointer, arrivalMicros: UInt64) {
        reporter.observeRTP(packet, arrivalMicros: arrivalMicros)
    }

    /// The compound packet due for the sender now, or nil when nothing is due: a receiver
    /// report with SDES CNAME every ``ReceiverReporter/intervalMicros``, and while a keyframe is
    /// wanted an early one with a PLI after it (RFC 4585 §3.5.3: RR, SDES, then the feedback).
    /// - Parameter nowMicros: monotonic now, µs.
    public mutating func outgoing(nowMicros: UInt64) -> Outgoing? {
        if requestsKeyframes, let media = reporter.mediaSSRC, let reason = keyframes.pendingReason,
           let pli = keyframes.pliIfDue(senderSSRC: reporter.ssrc, mediaSSRC: media, nowMicros: nowMicros),
           let report = reporter.reportNow(nowMicros: nowMicros) {
            return Outgoing(bytes: report + pli, keyframeRequest: reason)
        }
        return reporter.reportIfDue(nowMicros: nowMicros).map { Outgoing(bytes: $0, keyframeRequest: nil) }
    }

    /// A compound packet for the sender.
    public struct Outgoing: Equatable, Sendable {
        /// The packet: RR + SDES, and a PLI after them when it asks for a keyframe.
        public var bytes: [UInt8]
        /// Why it asks for a keyframe (nil: a receiver report only).
        public var keyframeRequest: KeyframeRequester.Reason?
    }

    /// A picture was damaged (or the stream joined mid-way): ask for a keyframe until one comes
    /// (``KeyframeRequester``); the PLI goes out with the next ``outgoing(nowMicros:)``.
    public mutating func requestKeyframe(_ reason: KeyframeRequester.Reason, nowMicros: UInt64) {
        keyframes.request(reason, nowMicros: nowMicros)
    }

    /// A random-access picture arrived whole: stop asking.
    /// - Returns: µs from the first damage to it, when a keyframe was being asked for.
    public mutating func randomAccessArrived(nowMicros: UInt64) -> UInt64? {
        keyframes.randomAccessArrived(nowMicros: nowMicros)
    }

    /// Keyframe requests are FIRs from the first (the SDP offered `ccm fir`).
    public var requestsFIRFirst: Bool {
        get { keyframes.firFirst }
        set { keyframes.firFirst = newValue }
    }

    /// True once, when the sender has not answered ``KeyframeRequester/unansweredBeforeNotice``
    /// requests in a row.
    public mutating func takeSilentSenderNotice() -> Bool { keyframes.takeSilentSenderNotice() }

    /// A random-access picture arrived with packets lost (``KeyframeRequester/answerArrivedDamaged()``).
    public mutating func randomAccessArrivedDamaged() { keyframes.answerArrivedDamaged() }

    /// The wall-clock instant of an RTP timestamp of stream `ssrc`, µs since the Unix epoch, or
    /// nil before a sender report of that SSRC (``SenderClock/wallMicros(rtpTimestamp:ssrc:)``).
    public func wallMicros(rtpTimestamp: UInt32, ssrc: UInt32) -> UInt64? {
        clock.wallMicros(rtpTimestamp: rtpTimestamp, ssrc: ssrc)
    }
}
