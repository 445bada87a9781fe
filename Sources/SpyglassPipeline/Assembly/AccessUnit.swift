/// One coded picture with the non-VCL units that belong to it: an access unit
/// (ITU-T H.264 §7.4.1.2.3, H.265 §7.4.2.4.4).
import SpyglassBitstream
public struct AccessUnit: Sendable {
    /// The rule that told the assembler this access unit was complete.
    public enum Completion: String, Sendable, Codable {
        /// The first unit of the next access unit arrived (the byte-stream rule: one unit late).
        case nextAccessUnit = "next-au"
        /// The input went idle after a VCL unit (no data for the idle-flush time).
        case idleGap = "idle"
        /// A short datagram ended a burst of full-size ones: a sender that packs its byte stream
        /// into datagrams of the link's size has written out the whole access unit. Used only once
        /// the stream has shown that its short datagrams end access units (``IdleFlushPolicy``).
        case burstEnd = "burst-end"
        /// The RTP marker bit (RFC 6184 §5.1, RFC 7798 §4.1): exact, no wait.
        case markerBit = "marker"
        /// An end-of-sequence or end-of-bitstream unit.
        case endOfSequence = "end-of-seq"
        /// The input ended.
        case endOfStream = "eos"
        /// MPEG-TS: the PES reached its `PES_packet_length` (ISO/IEC 13818-1 §2.4.3.7).
        case pesLength = "pes-length"
        /// MPEG-TS: the PES's last packet was filled with adaptation-field stuffing (§2.4.3.5).
        case tsStuffing = "ts-stuffing"
        /// Per-NAL decoding (`--decode nal`): the picture came out after its last slice went in.
        case perNALUnit = "nal"
    }

    public let codec: VideoCodec
    /// Sequence number of this access unit, from 0, counting only units that hold a picture.
    public var index: Int
    /// The NAL units in stream order.
    public var units: [NALUnit]
    /// True when a unit starts an IDR/IRAP picture (H.264 type 5, H.265 types 16...23).
    public var isRandomAccessPoint: Bool
    /// True when a slice of it is an IDR or BLA (``NALUnitHeader/isClosedRandomAccessPoint``):
    /// a decoder opened here shows what one that decoded everything before shows.
    public var isClosedRandomAccessPoint: Bool { units.contains { $0.header?.isClosedRandomAccessPoint == true } }
    /// True when the access unit carries its own SPS (and for H.265 its VPS).
    public var hasParameterSets: Bool
    /// True when a unit was damaged on the way (lost bytes, truncated datagram).
    public var damaged: Bool
    /// What closed it.
    public var completion: Completion
    /// Monotonic arrival of the first byte, µs.
    public var firstByteMicros: UInt64
    /// Monotonic arrival of the last byte, µs.
    public var lastByteMicros: UInt64
    /// Monotonic time the assembler knew the unit was complete, µs.
    public var completeMicros: UInt64
    /// Capture instant, µs since the Unix epoch (the sender's wall clock): from an ST 0604
    /// precision time stamp SEI, else from the transport (RTCP, KLV); nil when nothing said.
    public var captureWallMicros: UInt64? = nil
    /// Where ``captureWallMicros`` came from: `sei` (which wins), `rtcp` or `klv`.
    public var captureSource: CaptureSource = .sei
    /// VCL NAL units (slices or slice segments) in the picture.
    public var sliceCount = 0
    /// From a recovery point SEI in this access unit: H.264 `recovery_frame_cnt` (§D.2.8), 0 for
    /// H.265 (§D.3.8). nil when it carries none.
    public var recoveryFrameCount: Int? = nil

    /// True when every slice is an I or SI slice (H.264 Table 7-6; H.265 Table 7-7), read from
    /// the slice headers. An intra picture that is not IDR/IRAP (periodic intra pictures, a
    /// recording cut in the middle) is where a decoder can start when no better point comes.
    public var isAllIntra = false
    /// The slices a flush split off the picture of the access unit before this one (a slice of
    /// that picture came after it had gone out, ``AccessUnitAssembler/Counters/picturesSplit``):
    /// they belong to that picture, and the feed puts them back in it.
    public var isSplitFragment = false

    /// True when a decoder can start here: an IDR/IRAP picture or a recovery point.
    public var isJoinPoint: Bool { isRandomAccessPoint || recoveryFrameCount != nil }

    /// Total payload bytes (without start codes).
    public var byteCount: Int { units.reduce(0) { $0 + $1.bytes.count } }

    /// Takes in the slices a flush split off this picture (``isSplitFragment``), in stream order.
    public mutating func append(fragment: AccessUnit) {
        units += fragment.units
        sliceCount += fragment.sliceCount
        hasParameterSets = hasParameterSets || fragment.hasParameterSets
        isAllIntra = isAllIntra && fragment.isAllIntra
        lastByteMicros = fragment.lastByteMicros
        completeMicros = fragment.completeMicros
        damaged = units.contains { $0.damaged }
    }

    /// The access unit as an Annex B byte stream (4-byte start codes), for libavcodec or a file.
    /// - Parameter prefix: units to put first (for example stored parameter sets).
    public func annexB(prefix: [[UInt8]] = []) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(byteCount + 4 * (units.count + prefix.count))
        for p in prefix { out += [0, 0, 0, 1]; out += p }
        for u in units { out += [0, 0, 0, 1]; out += u.bytes }
        return out
    }
}
