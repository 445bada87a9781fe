/// What a depacketizer says happened, in stream order.
///
/// A stage says what it saw as an event; no later stage has to infer it by comparing counters.
import SpyglassBitstream
import SpyglassTransport
public enum DepacketizerEvent: Sendable {
    /// A complete NAL unit.
    case unit(NALUnit)
    /// The access unit in progress is complete, by `rule`, known at `atMicros` (monotonic µs).
    /// With ``AccessUnit/Completion/burstEnd`` the picture is closed only once it holds
    /// `minimumSlices` slices (the count the last pictures had), so that a sender that switches
    /// to one write per slice splits nothing.
    case accessUnitEnd(AccessUnit.Completion, atMicros: UInt64, minimumSlices: Int? = nil)
    /// The access unit in progress was captured at `wallMicros` (µs since the Unix epoch, the
    /// sender's wall clock), as a transport says (RTP timestamp through an RTCP sender report).
    /// An ST 0604 SEI stamp in the unit itself wins over it.
    case captureTime(wallMicros: UInt64, source: CaptureSource)
    /// A UAS Datalink Local Set (MISB ST 0601) arrived in the stream's KLV metadata.
    case metadata(PlatformMetadata)
    /// Bytes were lost inside the access unit in progress (RTP sequence gap, truncated datagram).
    case damage(lostPackets: Int)
    /// A NAL unit that an idle flush had ended went on short: more of it arrived after
    /// `pauseMicros` of quiet. `unitLastByteMicros` names the cut unit (its last-byte arrival).
    case cut(unitLastByteMicros: UInt64, pauseMicros: UInt64)
    /// A new sender on the same input (RTP SSRC change, sequence reset): start over.
    case restart(reason: String)
    /// A compound RTCP packet for the sender (a receiver report, with a PLI when a keyframe is wanted),
    /// made by the stream's ``RTCPSession``: the feed hands it to its source's way back
    /// (`ByteSource.sendToSender`), which drops it where there is none.
    /// `keyframeRequest` says why it carries a PLI (counted once the source could send it).
    case toSender([UInt8], keyframeRequest: KeyframeRequester.Reason?)
    /// RTP: a random-access point (IDR, IRAP) arrived `afterMicros` after the first picture
    /// that loss damaged (or after a join mid-way): the picture is clean again.
    case recovered(afterMicros: UInt64)
    /// A line worth logging (a learned wait went up or down, the framing that was detected).
    case note(String)
    /// The input is something this feed cannot read (for example MPEG-TS): the feed fails with
    /// this one-line reason rather than show garbage.
    case refuse(String)
}

/// Bytes in, NAL units and access-unit boundaries out: one ingest format.
///
/// Single-step, in the style of swift-nio's `NIOSingleStepByteToMessageDecoder`: the pipeline
/// pushes each chunk the source read (a datagram, or a read of a byte stream), calls
/// ``tick(nowMicros:emit:)`` when a read timed out, and ``finish(nowMicros:emit:)`` at the end of
/// input (or when a byte-stream sender went away). Everything is synchronous and pure Swift, so a
/// depacketizer can be tested byte by byte.
///
/// Adding an ingest format is one conformer plus one line in ``DepacketizerRegistry``.
public protocol Depacketizer {
    /// The framing this depacketizer reads; nil while it is still to be decided (``AutoDepacketizer``).
    var framing: Framing? { get }
    /// RTP tells the codec from its SDP or payload; nil when only the NAL headers can tell.
    var codec: VideoCodec? { get }
    /// Takes one chunk as read.
    /// - Parameters:
    ///   - chunk: the bytes (one datagram, or one read of a byte stream).
    ///   - arrivalMicros: monotonic arrival time, µs.
    ///   - truncated: the datagram was cut by the receive buffer (its tail lost).
    ///   - emit: receives the events, in order.
    mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                       emit: (DepacketizerEvent) -> Void)
    /// The longest the pipeline may block on its source before calling ``tick(nowMicros:emit:)``, µs.
    func pollTimeoutMicros(default: Int) -> Int
    /// Time passed with no input: idle flushes, jitter-buffer releases.
    mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void)
    /// The input ended (or a byte-stream sender left): what is pending is complete.
    mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void)
    /// Feedback from access-unit assembly: a picture of `slices` slices was completed.
    mutating func noteAccessUnit(slices: Int)
    /// Feedback from access-unit assembly: a flush closed a picture between two of its slices.
    mutating func notePictureSplit()
    /// What this stage counted so far (monotonic), for the metrics registry.
    var counts: [Metric: Int] { get }
}

extension Depacketizer {
    public var codec: VideoCodec? { nil }
    public mutating func noteAccessUnit(slices: Int) {}
    public mutating func notePictureSplit() {}
}
