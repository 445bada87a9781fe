/// What a receiver reports back to an RTP sender (RFC 3550 §6.4.2): reception statistics of
/// the stream it plays (Appendix A.1 sequence numbers, A.3 loss, A.8 jitter) and the echo of the
/// sender's last report (LSR, DLSR), sent as a compound RR + SDES CNAME (§6.1).
///
/// Some servers stop a stream when no report comes. A value type, fed by the source that owns
/// the RTCP socket or channel: it sees every RTP header and every sender report it delivers.
public struct ReceiverReporter: Sendable {
    /// Time between reports, µs (RFC 3550 §6.2 allows less than 5 s for a single receiver).
    public static let intervalMicros: UInt64 = 2_000_000
    /// Our SSRC (random, RFC 3550 §8.1).
    public let ssrc: UInt32
    private var stream: UInt32?
    private var baseSequence: UInt32 = 0
    private var maxSequence: UInt16 = 0
    private var cycles: UInt32 = 0
    private var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var jitter: Double = 0
    private var lastTransit: Int64?
    private var lastSenderReport: (compactNTP: UInt32, arrivalMicros: UInt64)?
    private var nextReportMicros: UInt64?
    private var lastRTPMicros: UInt64 = 0
    /// A sender silent this long gets no more reports until it sends again, µs: RFC 3550 §6.3.5
    /// times a source out after 5 report intervals.
    public static let senderTimeoutMicros = 5 * intervalMicros

    /// - Parameter ssrc: our SSRC (random by default).
    public init(ssrc: UInt32 = UInt32.random(in: 1...UInt32.max)) { self.ssrc = ssrc }

    /// Notes one RTP packet of the stream; a new SSRC starts the statistics over (§A.1).
    /// - Parameters:
    ///   - datagram: the RTP packet (only its fixed header is read; anything shorter is ignored).
    ///   - arrivalMicros: monotonic arrival, µs.
    public mutating func observeRTP(_ datagram: UnsafeRawBufferPointer, arrivalMicros: UInt64) {
        guard let (sequence, timestamp, ssrc) = RTPPacket.fixedHeader(datagram) else { return }
        if stream != ssrc { start(ssrc, sequence, arrivalMicros) }
        lastRTPMicros = arrivalMicros
        received += 1
        if sequence &- maxSequence < 0x8000 && sequence != maxSequence {
            if sequence < maxSequence { cycles &+= 1 << 16 }
            maxSequence = sequence
        }
        // Interarrival jitter in timestamp units (§6.4.1, A.8), at 90 kHz.
        let transit = Int64(arrivalMicros * 90 / 1000) - Int64(timestamp)
        if let last = lastTransit {
            let d = Double(abs(Int64(Int32(truncatingIfNeeded: transit - last))))
            jitter += (d - jitter) / 16
        }
        lastTransit = transit
    }

    private mutating func start(_ ssrc: UInt32, _ sequence: UInt16, _ arrivalMicros: UInt64) {
        stream = ssrc
        baseSequence = UInt32(sequence)
        maxSequence = sequence
        cycles = 0
        received = 0
        expectedPrior = 0
        receivedPrior = 0
        jitter = 0
        lastTransit = nil
        if nextReportMicros == nil { nextReportMicros = arrivalMicros + Self.intervalMicros / 4 }
    }

    /// Notes a sender report (for LSR and DLSR).
    /// - Parameters:
    ///   - report: the sender report.
    ///   - arrivalMicros: monotonic arrival, µs.
    public mutating func observe(_ report: RTCPPacket.SenderReport, arrivalMicros: UInt64) {
        lastSenderReport = (report.compactNTP, arrivalMicros)
    }

    /// The SSRC of the RTP stream being reported on (nil before its first packet).
    public var mediaSSRC: UInt32? { stream }

    /// A compound RR + SDES packet now, due or not (an early report to lead feedback, RFC 4585
    /// §3.5.3), when the stream is known; the next regular one is an interval from now.
    /// - Parameter nowMicros: monotonic now, µs.
    public mutating func reportNow(nowMicros: UInt64) -> [UInt8]? {
        guard let stream else { return nil }
        nextReportMicros = nowMicros + Self.intervalMicros
        return receiverReport(for: stream, nowMicros: nowMicros) + sourceDescription()
    }

    /// A compound RR + SDES packet when one is due (every ``intervalMicros`` while RTP flows, and
    /// none once the sender has been silent for ``senderTimeoutMicros``), else nil.
    /// - Parameter nowMicros: monotonic now, µs.
    public mutating func reportIfDue(nowMicros: UInt64) -> [UInt8]? {
        guard let due = nextReportMicros, nowMicros >= due, let stream,
              nowMicros <= lastRTPMicros + Self.senderTimeoutMicros else { return nil }
        nextReportMicros = nowMicros + Self.intervalMicros
        return receiverReport(for: stream, nowMicros: nowMicros) + sourceDescription()
    }

    /// RR with one report block (RFC 3550 §6.4.2).
    private mutating func receiverReport(for stream: UInt32, nowMicros: UInt64) -> [UInt8] {
        let extendedMax = cycles + UInt32(maxSequence)
        let expected = extendedMax &- baseSequence &+ 1
        let lost = Int64(expected) - Int64(received)
        let expectedInterval = expected &- expectedPrior
        let receivedInterval = received &- receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        let fraction = expectedInterval == 0 || lostInterval <= 0 ? 0 : UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
        let cumulative = UInt32(bitPattern: Int32(clamping: max(-0x80_0000, min(0x7F_FFFF, lost)))) & 0xFF_FFFF
        var lsr: UInt32 = 0, dlsr: UInt32 = 0
        if let sr = lastSenderReport {
            lsr = sr.compactNTP
            dlsr = UInt32(truncatingIfNeeded: (nowMicros - sr.arrivalMicros) * 65_536 / 1_000_000)   // 1/65536 s
        }
        var out: [UInt8] = [0x81, RTCPPacket.receiverReportType, 0, 7]
        for word in [ssrc, stream, UInt32(fraction) << 24 | cumulative, extendedMax, UInt32(jitter), lsr, dlsr] {
            out += RTCPPacket.bigEndian(word)
        }
        return out
    }

    /// SDES with our CNAME, which every compound packet carries (RFC 3550 §6.1, §6.5.1).
    private func sourceDescription() -> [UInt8] { RTCPPacket.sourceDescription(ssrc: ssrc, cname: "spyglass") }
}
