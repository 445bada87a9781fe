/// The parameter sets (VPS/SPS/PPS) seen in a stream, raw and parsed, by id.
///
/// Kept so that (1) slice headers can be read for picture boundaries (H.264 §7.4.1.2.4),
/// (2) a decoder that is (re)opened mid-stream can be primed when a later IDR comes without
/// its parameter sets, and (3) a change of SPS under the same id is noticed and logged.
import SpyglassBitstream
public struct ParameterSetStore: Sendable {
    /// The stream's codec: which NAL unit types are parameter sets (H.264 7/8, H.265 32/33/34).
    public let codec: VideoCodec
    let maxWidth: Int
    let maxHeight: Int

    /// Raw H.265 VPS units (as sent: escaped, header included) by vps_video_parameter_set_id
    /// (ITU-T H.265 §7.4.3.1).
    public private(set) var vps: [Int: [UInt8]] = [:]
    /// Raw SPS units (as sent: escaped, header included) by seq_parameter_set_id
    /// (ITU-T H.264 §7.4.2.1.1, H.265 §7.4.3.2.1).
    public private(set) var sps: [Int: [UInt8]] = [:]
    /// Raw PPS units (as sent: escaped, header included) by pic_parameter_set_id
    /// (ITU-T H.264 §7.4.2.2, H.265 §7.4.3.3.1).
    public private(set) var pps: [Int: [UInt8]] = [:]
    /// Parsed H.264 SPSs by seq_parameter_set_id (ITU-T H.264 §7.3.2.1.1).
    public private(set) var h264SPS: [Int: H264SPS] = [:]
    /// Parsed H.264 PPSs by pic_parameter_set_id (ITU-T H.264 §7.3.2.2).
    public private(set) var h264PPS: [Int: H264PPS] = [:]
    /// Parsed H.265 SPSs by sps_seq_parameter_set_id (ITU-T H.265 §7.3.2.2.1).
    public private(set) var h265SPS: [Int: H265SPS] = [:]
    /// Parsed H.265 PPSs by pps_pic_parameter_set_id (ITU-T H.265 §7.3.2.3.1).
    public private(set) var h265PPS: [Int: H265PPS] = [:]
    /// The stream format of the most recently stored SPS.
    public private(set) var latestFormat: StreamFormat?
    /// Parameter sets that failed to parse (dropped from the store, still passed to the decoder).
    public private(set) var invalidParameterSets = 0
    /// Parameter sets refused for a picture over the size cap.
    public private(set) var oversizePictures = 0
    /// One line per SPS change (id reused with different content), oldest first; at most 32 kept.
    public private(set) var changes: [String] = []
    /// Changes seen in all (``changes`` keeps the latest 100).
    public private(set) var changeCount = 0

    /// An empty store for one stream.
    /// - Parameters:
    ///   - codec: the stream's codec.
    ///   - maxWidth/maxHeight: an SPS over this picture size is refused (luma samples;
    ///     default ``PictureSizeCap/default``).
    public init(codec: VideoCodec, maxWidth: Int = PictureSizeCap.default.width,
                maxHeight: Int = PictureSizeCap.default.height) {
        self.codec = codec
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }

    /// All stored parameter sets as units, VPS first, then SPS, then PPS (for priming a decoder).
    public var allUnits: [[UInt8]] {
        vps.keys.sorted().compactMap { vps[$0] } + sps.keys.sorted().compactMap { sps[$0] }
            + pps.keys.sorted().compactMap { pps[$0] }
    }

    /// True after an SPS was refused for its size, until an acceptable SPS arrives: the
    /// pictures in between must not be decoded (libavcodec would still allocate for them).
    public private(set) var refusing = false

    /// Stores a parameter-set unit. Malformed or over-cap sets are counted and not stored.
    public mutating func store(header: NALUnitHeader, unit: [UInt8]) {
        do {
            switch (codec, header.type) {
            case (.h264, 7):
                let s = try H264SPS(nalUnit: unit, maxWidth: maxWidth, maxHeight: maxHeight)
                let id = Int(s.seqParameterSetId)
                noteChange(id: id, old: h264SPS[id].map(StreamFormat.init), new: StreamFormat(s), raw: unit)
                h264SPS[id] = s; sps[id] = unit
                latestFormat = StreamFormat(s)
                refusing = false
            case (.h264, 8):
                let p = try H264PPS(nalUnit: unit)
                h264PPS[Int(p.picParameterSetId)] = p; pps[Int(p.picParameterSetId)] = unit
            case (.h265, 32):
                let v = try H265VPS(nalUnit: unit)
                vps[Int(v.vpsVideoParameterSetId)] = unit
            case (.h265, 33):
                let s = try H265SPS(nalUnit: unit, maxWidth: maxWidth, maxHeight: maxHeight)
                let id = Int(s.seqParameterSetId)
                noteChange(id: id, old: h265SPS[id].map(StreamFormat.init), new: StreamFormat(s), raw: unit)
                h265SPS[id] = s; sps[id] = unit
                latestFormat = StreamFormat(s)
                refusing = false
            case (.h265, 34):
                let p = try H265PPS(nalUnit: unit)
                h265PPS[Int(p.ppsPicParameterSetId)] = p; pps[Int(p.ppsPicParameterSetId)] = unit
            default:
                break
            }
        } catch BitstreamError.unsupported {
            oversizePictures += 1
            refusing = true
        } catch {
            invalidParameterSets += 1
        }
    }

    private mutating func noteChange(id: Int, old: StreamFormat?, new: StreamFormat, raw: [UInt8]) {
        guard let old, old != new else { return }
        if changes.count >= 32 { changes.removeFirst() }
        changes.append("SPS \(id) changed: \(old) → \(new)")
        changeCount += 1
        if changes.count > 100 { changes.removeFirst(changes.count - 100) }
    }

    /// Bytes of a slice unit read for its header fields.
    public static let sliceHeaderBytes = 256

    /// Reads what picture-boundary detection needs from a slice unit.
    /// Only the first ``sliceHeaderBytes`` of the unit are read (and unescaped): the fields
    /// needed sit at the start of the slice header, and a slice can be hundreds of kilobytes.
    public func sliceInfo(header: NALUnitHeader, unit: [UInt8]) -> SliceInfo {
        let head = unit.prefix(Self.sliceHeaderBytes)
        switch codec {
        case .h264:
            let s = try? H264SliceHeaderStart(nalUnit: head, spsByID: h264SPS, ppsByID: h264PPS)
            return SliceInfo(h264: s, h265: nil, header: header)
        case .h265:
            let s = try? H265SliceSegmentHeaderStart(nalUnit: head, spsByID: h265SPS, ppsByID: h265PPS)
            return SliceInfo(h264: nil, h265: s, header: header)
        }
    }
}

/// The slice-header fields that decide whether a VCL unit starts a new picture.
public struct SliceInfo {
    /// The H.264 slice header start; nil for H.265, or when the header could not be read.
    public let h264: H264SliceHeaderStart?
    /// The H.265 slice segment header start; nil for H.264, or when the header could not be read.
    public let h265: H265SliceSegmentHeaderStart?
    /// The unit's NAL unit header (ITU-T H.264 §7.3.1, H.265 §7.3.1.2).
    public let header: NALUnitHeader

    /// Whether the slice is intra: H.264 `slice_type` I or SI (2, 4, 7, 9; §7.4.3, Table 7-6),
    /// H.265 `slice_type` 2 (I; Table 7-7). A dependent H.265 slice segment takes the type of the
    /// segment it depends on, so it says nothing (nil); so does a header that could not be read.
    public var isIntra: Bool? {
        if let s = h264 { return s.sliceType % 5 == 2 || s.sliceType % 5 == 4 }
        if let s = h265, let t = s.sliceType { return t == 2 }
        return nil
    }

    /// True only when this slice is known to belong to `previous`'s picture and not to begin
    /// it: H.264 `first_mb_in_slice` > 0 with the §7.4.1.2.4 fields equal; H.265
    /// `first_slice_segment_in_pic_flag` = 0 (§7.4.7.1). False when this slice's header is
    /// unreadable; when only `previous`'s is (an idle flush cut it inside its header), this
    /// slice's own first-slice field decides, as in ``startsNewPicture(after:)``.
    public func continuesPicture(of previous: SliceInfo) -> Bool {
        if let cur = h264 {
            // As in startsNewPicture: when the slice before could not be read (an idle flush cut
            // it inside its header), first_mb_in_slice alone decides.
            guard let prev = previous.h264 else { return cur.firstMbInSlice != 0 }
            return cur.firstMbInSlice != 0 && !H264SliceHeaderStart.startsNewPicture(previous: prev, current: cur)
        }
        if let cur = h265 { return !cur.firstSliceSegmentInPicFlag }
        return false
    }

    /// True when this slice begins a new picture after `previous`, the slice before it in the
    /// stream: it is the first VCL NAL unit of a new primary coded picture (ITU-T H.264
    /// §7.4.1.2.4), or a slice segment with `first_slice_segment_in_pic_flag` = 1 (ITU-T H.265
    /// §7.4.7.1).
    ///
    /// - H.264: ``H264SliceHeaderStart/startsNewPicture(previous:current:)``, i.e. the §7.4.1.2.4
    ///   comparisons (frame_num, pic_parameter_set_id, field flags, nal_ref_idc, POC fields,
    ///   IdrPicFlag, idr_pic_id) or `first_mb_in_slice` = 0. When `previous`'s header could not
    ///   be read, `first_mb_in_slice` = 0 alone decides.
    /// - H.265: `first_slice_segment_in_pic_flag` alone; `previous` is not looked at.
    /// - A slice whose own header could not be read never starts a picture (false): it stays
    ///   with the picture before it, and the decoder counts it.
    public func startsNewPicture(after previous: SliceInfo) -> Bool {
        if let cur = h264 {
            guard let prev = previous.h264 else { return cur.firstMbInSlice == 0 }
            return H264SliceHeaderStart.startsNewPicture(previous: prev, current: cur)
        }
        if let cur = h265 { return cur.firstSliceSegmentInPicFlag }
        return false
    }
}
