/// When to ask an RTP sender for a keyframe, and the Picture Loss Indication that asks
/// (RFC 4585 §6.3.1), or, when PLIs go unanswered, the Full Intra Request (RFC 5104 §4.3.1).
///
/// A lost packet damages every picture until the sender's next IDR (H.264) or IRAP (H.265);
/// cameras send those every 2 to 30 s. A PLI makes a sender that honours it (GStreamer's
/// `rtpbin` with x264enc, gst-rtsp-server, `spyglass send --rtp`) send one at once, about one
/// round trip later. Asking starts on damage (a sequence gap that hits a picture, a cut
/// fragmentation unit) or on a join that does not begin at a random-access point, and repeats
/// every ``repeatMicros`` until a random-access point arrives; never more than
/// ``maximumPerSecond`` a second (RFC 4585 §3.5 leaves the timing to the receiver within its
/// RTCP bandwidth; 200 ms is at least twice the round trip of every link Spyglass plays).
///
/// A value type, owned by the stream's ``RTCPSession``.
public struct KeyframeRequester: Sendable {
    /// Why a keyframe was asked for (`keyframe_requests_total{reason}`).
    public enum Reason: String, CaseIterable, Sendable {
        /// RTP packets were lost inside a picture (a sequence gap, RFC 3550 §A.1).
        case loss
        /// A fragmentation unit (RFC 6184 §5.8, RFC 7798 §4.4.3) lost its start or end.
        case cut
        /// The stream was joined (or its sender restarted) at a picture that is not a
        /// random-access point.
        case join
    }

    /// Time between requests while no random-access point comes, µs (RFC 4585 §3.5: at least
    /// twice the round trip; at most 5 a second).
    public static let repeatMicros: UInt64 = 200_000
    /// Requests at most this many a second.
    public static let maximumPerSecond = 5

    /// Requests made so far, by reason (whether they could be sent is the source's to say).
    public private(set) var made: [Reason: Int] = [:]
    /// What is being asked for, and since when (monotonic µs, the first damage); nil when the
    /// picture is clean.
    public private(set) var pending: (reason: Reason, sinceMicros: UInt64)?
    private var lastSentMicros: UInt64?
    private var recentSends: [UInt64] = []
    /// Requests sent for the pending damage: after ``plisBeforeFIR`` unanswered PLIs the rest
    /// are FIRs.
    private var sentForPending = 0
    /// The FIR command sequence number (RFC 5104 §4.3.1.1: one more for each new request, the
    /// same for its repetitions).
    private var firSequence: UInt8 = 0
    private var firSequenceUsed = false
    /// PLIs sent for one damage before a FIR is tried instead (a sender may answer only FIR).
    public static let plisBeforeFIR = 2
    /// The sender offered `ccm fir` in its SDP (RFC 5104 §7.1): every request is a FIR.
    public var firFirst = false
    /// Requests sent with no random-access picture at all coming back (2 s at the capped rate)
    /// before the sender is said not to answer them (``takeSilentSenderNotice()``), once.
    public static let unansweredBeforeNotice = 10
    private var sentSinceAnswer = 0
    private var silentNotice = false, saidSilent = false

    public init() {}

    /// Starts asking (or keeps asking, under the first reason and since the first damage).
    /// - Parameters:
    ///   - reason: what damaged the picture.
    ///   - nowMicros: monotonic now, µs.
    public mutating func request(_ reason: Reason, nowMicros: UInt64) {
        if pending == nil { pending = (reason, nowMicros) }
    }

    /// A random-access point arrived (an IDR, an IRAP): the picture is clean again.
    /// - Parameter nowMicros: monotonic now, µs.
    /// - Returns: the time from the first damage to it, µs, when a request was pending.
    public mutating func randomAccessArrived(nowMicros: UInt64) -> UInt64? {
        sentSinceAnswer = 0
        defer {
            pending = nil
            sentForPending = 0
            if firSequenceUsed { firSequence &+= 1; firSequenceUsed = false }
        }
        guard let p = pending else { return nil }
        return nowMicros >= p.sinceMicros ? nowMicros - p.sinceMicros : 0
    }

    /// A random-access picture arrived with packets lost: the sender answered (the round trip is
    /// over), but the picture is still damaged. The request stays pending and the next one may
    /// go at once rather than ``repeatMicros`` after the last (still at most ``maximumPerSecond``
    /// a second). A large IDR is the picture most likely to be hit by the same loss.
    public mutating func answerArrivedDamaged() {
        sentSinceAnswer = 0
        guard pending != nil else { return }
        lastSentMicros = nil
    }

    /// True once, when ``unansweredBeforeNotice`` requests in a row brought no random-access
    /// picture: the sender does not answer them (asking goes on at the capped rate).
    public mutating func takeSilentSenderNotice() -> Bool {
        defer { silentNotice = false }
        return silentNotice
    }

    /// Why the pending request was made (nil when none is pending).
    public var pendingReason: Reason? { pending?.reason }

    /// The request to send now, when one is due (pending, ``repeatMicros`` since the last, under
    /// ``maximumPerSecond``), and counts it: a PLI, or after ``plisBeforeFIR`` unanswered ones (or
    /// from the first with ``firFirst``) a FIR.
    /// - Parameters:
    ///   - senderSSRC: ours, as in our receiver reports.
    ///   - mediaSSRC: the RTP stream's SSRC, which the request is about.
    ///   - nowMicros: monotonic now, µs.
    /// - Returns: the 12-byte PLI (RFC 4585 §6.1 header, PT 206 PSFB, FMT 1) or the 20-byte FIR
    ///   (RFC 5104 §4.3.1, FMT 4), or nil.
    public mutating func pliIfDue(senderSSRC: UInt32, mediaSSRC: UInt32, nowMicros: UInt64) -> [UInt8]? {
        guard let p = pending else { return nil }
        if let last = lastSentMicros, nowMicros < last + Self.repeatMicros { return nil }
        recentSends.removeAll { $0 + 1_000_000 <= nowMicros }
        guard recentSends.count < Self.maximumPerSecond else { return nil }
        recentSends.append(nowMicros)
        lastSentMicros = nowMicros
        made[p.reason, default: 0] += 1
        sentForPending += 1
        sentSinceAnswer += 1
        if sentSinceAnswer >= Self.unansweredBeforeNotice && !saidSilent { silentNotice = true; saidSilent = true }
        guard sentForPending > Self.plisBeforeFIR || firFirst else { return Self.pli(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC) }
        firSequenceUsed = true
        return Self.fir(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, sequence: firSequence)
    }

    /// A Full Intra Request (RFC 5104 §4.3.1): V=2, FMT=4, PT=206, length 4 words, the packet
    /// sender's SSRC, media source SSRC 0, then one FCI entry: the target's SSRC and the command
    /// sequence number (8 bits, then 24 reserved).
    public static func fir(senderSSRC: UInt32, mediaSSRC: UInt32, sequence: UInt8) -> [UInt8] {
        [0x84, 206, 0, 4] + RTCPPacket.bigEndian(senderSSRC) + RTCPPacket.bigEndian(0) + RTCPPacket.bigEndian(mediaSSRC)
            + [sequence, 0, 0, 0]
    }

    /// A Picture Loss Indication (RFC 4585 §6.3.1): V=2, FMT=1, PT=206, length 2 words, then
    /// the packet sender's SSRC and the media source's.
    public static func pli(senderSSRC: UInt32, mediaSSRC: UInt32) -> [UInt8] {
        [0x81, 206, 0, 2] + RTCPPacket.bigEndian(senderSSRC) + RTCPPacket.bigEndian(mediaSSRC)
    }
}
