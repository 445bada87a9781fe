/// A decoder behind the pipeline's decode seam: access units (or, H.264 per-NAL, units) in,
/// pictures out, on the calling thread. ``VideoDecoder`` (libavcodec) is the one Spyglass uses.
import SpyglassBitstream
import SpyglassPipeline
public protocol VideoDecoding: AnyObject {
    /// The codec it decodes.
    var codec: VideoCodec { get }
    /// True when fed one NAL unit at a time (H.264 `AV_CODEC_FLAG2_CHUNKS`).
    var perNAL: Bool { get }
    /// What it counted (frames, errors, concealment); only grows while it lives.
    var counters: VideoDecoder.Counters { get }
    /// Decodes one access unit; `emit` gets each picture that comes out now, in output order.
    func decode(_ au: AccessUnit, emit: (DecodedFrame) -> Void)
    /// Per-NAL mode: decodes one unit of access unit `accessUnitIndex`.
    func decode(unit: NALUnit, accessUnitIndex: Int, isParameterSet: Bool, captureWallMicros: UInt64?,
                emit: (DecodedFrame) -> Void)
    /// Bytes were lost: turn concealment on where it is off (per-NAL mode).
    func noteDamage()
    /// Reopens the decoder and primes it with `parameterSets` (a sender restart).
    /// - Throws: ``VideoDecoder/DecoderError`` when it cannot be reopened.
    func reset(parameterSets: [[UInt8]]) throws
    /// Closes the decoder, giving back the memory of its pictures and pools; the next access
    /// unit (or unit) opens it again, primed with `parameterSets`. No-op when closed already.
    func release(parameterSets: [[UInt8]])
    /// Puts these parameter sets before the next access unit that carries none.
    func prime(with parameterSets: [[UInt8]])
    /// Returns the pictures held for reordering (end of stream, codec change).
    func drain(emit: (DecodedFrame) -> Void)
}

/// What a decoder is opened with: one value, so that a new setting is one field, not a new
/// parameter on every factory.
public struct DecoderSettings: Sendable, Equatable {
    /// H.264 or H.265.
    public var codec: VideoCodec
    /// Slice threads (1 = one thread). Frame threading is never used (it adds a picture of delay).
    public var threads = 1
    /// H.264 per NAL unit (`--decode nal`).
    public var perNAL = false
    /// Show pictures libavcodec would hold back until a recovered one (a join mid-stream, after
    /// loss): `AV_CODEC_FLAG_OUTPUT_CORRUPT` and `AV_CODEC_FLAG2_SHOW_ALL` (`--join show`).
    /// They come out flagged corrupt, and are shown marked damaged.
    public var showCorrupt = false

    public init(codec: VideoCodec, threads: Int = 1, perNAL: Bool = false, showCorrupt: Bool = false) {
        self.codec = codec
        self.threads = threads
        self.perNAL = perNAL
        self.showCorrupt = showCorrupt
    }
}

/// Builds a decoder.
/// - Throws: ``VideoDecoder/DecoderError``.
public typealias DecoderFactory = (DecoderSettings) throws -> any VideoDecoding
