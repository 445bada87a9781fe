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

/// Builds a decoder for a codec.
/// - Parameters: codec; slice threads (1 = one thread); per-NAL (H.264 only).
/// - Throws: ``VideoDecoder/DecoderError``.
public typealias DecoderFactory = (_ codec: VideoCodec, _ threads: Int, _ perNAL: Bool) throws -> any VideoDecoding
