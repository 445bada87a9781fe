// H.265 video/sequence/picture parameter sets and the start of the slice segment header.
//
// Syntax: ITU-T H.265 (v8, 08/2021) §7.3.2.1 (VPS), §7.3.2.2.1 (SPS), §7.3.2.3.1 (PPS),
// §7.3.3 (profile_tier_level), §7.3.4 (scaling_list_data), §7.3.6.1 (slice segment header),
// §7.3.7 (st_ref_pic_set), Annex E.2.1 (VUI), E.2.2 (hrd_parameters), E.2.3 (sub_layer_hrd_parameters).
// Every parser takes one NAL unit as sent (escaped, 2-byte header included, no start code),
// removes emulation prevention with `RBSP.unescape`, and throws `BitstreamError` on truncated
// or out-of-range input. Every `ue(v)` used as a loop count or size is range-checked first.

// MARK: - Shared private helpers

/// The H.265 NAL unit header (§7.3.1.2).
private struct H265NALHeader {
    var type: Int
    var layerId: Int
    var temporalIdPlus1: Int
}

/// Reads the two-byte H.265 NAL unit header (§7.3.1.2).
private func readH265NALHeader(_ r: inout BitReader) throws -> H265NALHeader {
    if try r.flag() { throw BitstreamError.invalid("forbidden_zero_bit = 1") }
    let type = Int(try r.bits(6))
    let layerId = Int(try r.bits(6))
    let tid = Int(try r.bits(3))
    guard tid != 0 else { throw BitstreamError.invalid("nuh_temporal_id_plus1 = 0") }
    return H265NALHeader(type: type, layerId: layerId, temporalIdPlus1: tid)
}

/// ceil(a / b) for a ≥ 0, b > 0, without overflow; 0 for negative a.
private func h265CeilDiv(_ a: Int, _ b: Int) -> Int {
    guard a > 0 else { return 0 }
    return a / b + (a % b == 0 ? 0 : 1)
}

/// Ceil(Log2(n)) for n ≥ 1 (§5.7); 0 for n ≤ 1.
private func h265CeilLog2(_ n: Int) -> Int {
    n <= 1 ? 0 : Int.bitWidth - (n - 1).leadingZeroBitCount
}

/// Parses and discards scaling_list_data() (§7.3.4).
private func skipH265ScalingListData(_ r: inout BitReader) throws {
    for sizeId in 0..<4 {
        var matrixId = 0
        while matrixId < 6 {
            if !(try r.flag()) { // scaling_list_pred_mode_flag
                let maxDelta = sizeId == 3 ? matrixId / 3 : matrixId
                _ = try r.ue(max: UInt32(maxDelta), "scaling_list_pred_matrix_id_delta")
            } else {
                let coefNum = min(64, 1 << (4 + (sizeId << 1)))
                if sizeId > 1 {
                    let dc = try r.se() // scaling_list_dc_coef_minus8
                    guard (-7...247).contains(dc) else {
                        throw BitstreamError.invalid("scaling_list_dc_coef_minus8 = \(dc) outside -7...247")
                    }
                }
                for _ in 0..<coefNum {
                    let d = try r.se() // scaling_list_delta_coef
                    guard (-128...127).contains(d) else {
                        throw BitstreamError.invalid("scaling_list_delta_coef = \(d) outside -128...127")
                    }
                }
            }
            matrixId += sizeId == 3 ? 3 : 1
        }
    }
}

// MARK: - VPS

/// An H.265 video parameter set (`video_parameter_set_rbsp`, ITU-T H.265 §7.3.2.1), first fields only.
public struct H265VPS: Sendable, Hashable {
    /// vps_video_parameter_set_id, 0...15 (ITU-T H.265 §7.4.3.1).
    public private(set) var vpsVideoParameterSetId: Int = 0
    /// vps_base_layer_internal_flag (ITU-T H.265 §7.4.3.1).
    public private(set) var vpsBaseLayerInternalFlag: Bool = true
    /// vps_base_layer_available_flag (ITU-T H.265 §7.4.3.1).
    public private(set) var vpsBaseLayerAvailableFlag: Bool = true
    /// vps_max_layers_minus1, 0...62 (ITU-T H.265 §7.4.3.1).
    public private(set) var vpsMaxLayersMinus1: Int = 0
    /// vps_max_sub_layers_minus1: temporal sub-layers − 1, 0...6 (ITU-T H.265 §7.4.3.1).
    public private(set) var maxSubLayersMinus1: Int = 0
    /// vps_temporal_id_nesting_flag (ITU-T H.265 §7.4.3.1).
    public private(set) var vpsTemporalIdNestingFlag: Bool = false

    /// Parses a VPS NAL unit (nal_unit_type 32) as sent: escaped, header included, no start code (ITU-T H.265 §7.3.2.1).
    public init<C: Collection>(nalUnit: C) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH265NALHeader(&r)
        guard header.type == 32 else { throw BitstreamError.invalid("nal_unit_type \(header.type) is not a VPS (32)") }
        vpsVideoParameterSetId = Int(try r.bits(4))
        vpsBaseLayerInternalFlag = try r.flag()
        vpsBaseLayerAvailableFlag = try r.flag()
        vpsMaxLayersMinus1 = Int(try r.bits(6))
        maxSubLayersMinus1 = Int(try r.bits(3))
        guard maxSubLayersMinus1 <= 6 else { throw BitstreamError.invalid("vps_max_sub_layers_minus1 = 7") }
        vpsTemporalIdNestingFlag = try r.flag()
        guard try r.bits(16) == 0xFFFF else { throw BitstreamError.invalid("vps_reserved_0xffff_16bits") }
    }
}

// MARK: - Short-term reference picture set

/// One short-term reference picture set as derived from st_ref_pic_set() (ITU-T H.265 §7.3.7, §7.4.8, eqs. 7-61…7-64).
public struct H265ShortTermRefPicSet: Sendable, Hashable {
    /// DeltaPocS0[i]: POC differences (negative, decreasing) of the earlier reference pictures, in POC units (ITU-T H.265 §7.4.8).
    public var deltaPocS0: [Int] = []
    /// UsedByCurrPicS0[i]: whether each S0 picture is used for reference by the current picture (ITU-T H.265 §7.4.8).
    public var usedByCurrPicS0: [Bool] = []
    /// DeltaPocS1[i]: POC differences (positive, increasing) of the later reference pictures, in POC units (ITU-T H.265 §7.4.8).
    public var deltaPocS1: [Int] = []
    /// UsedByCurrPicS1[i]: whether each S1 picture is used for reference by the current picture (ITU-T H.265 §7.4.8).
    public var usedByCurrPicS1: [Bool] = []

    /// NumNegativePics, in pictures (ITU-T H.265 §7.4.8).
    public var numNegativePics: Int { deltaPocS0.count }
    /// NumPositivePics, in pictures (ITU-T H.265 §7.4.8).
    public var numPositivePics: Int { deltaPocS1.count }
    /// NumDeltaPocs = NumNegativePics + NumPositivePics, in pictures (ITU-T H.265 §7.4.8).
    public var numDeltaPocs: Int { deltaPocS0.count + deltaPocS1.count }

    /// Largest NumDeltaPocs accepted: MaxDpbSize − 1 for the largest MaxDpbSize (16) (ITU-T H.265 §A.4.2).
    static let maxPictures = 16

    /// Parses st_ref_pic_set(stRpsIdx) (ITU-T H.265 §7.3.7) and derives its lists (§7.4.8).
    /// - Parameters:
    ///   - stRpsIdx: index of the set being parsed; equal to `numShortTermRefPicSets` in a slice header.
    ///   - numShortTermRefPicSets: num_short_term_ref_pic_sets of the SPS.
    ///   - previous: the sets of the SPS parsed so far (at least min(stRpsIdx, numShortTermRefPicSets) of them).
    init(_ r: inout BitReader, stRpsIdx: Int, numShortTermRefPicSets: Int, previous: [H265ShortTermRefPicSet]) throws {
        // inter_ref_pic_set_prediction_flag, present from the second set on.
        if stRpsIdx != 0, try r.flag() {
            try readPredicted(&r, stRpsIdx: stRpsIdx, numShortTermRefPicSets: numShortTermRefPicSets, previous: previous)
        } else {
            try readExplicit(&r)
        }
        guard numDeltaPocs <= Self.maxPictures else {
            throw BitstreamError.invalid("short-term RPS \(stRpsIdx) holds \(numDeltaPocs) pictures > \(Self.maxPictures)")
        }
    }

    /// A set predicted from an earlier one (inter_ref_pic_set_prediction_flag = 1, §7.3.7).
    private mutating func readPredicted(_ r: inout BitReader, stRpsIdx: Int, numShortTermRefPicSets: Int,
                                        previous: [H265ShortTermRefPicSet]) throws {
        var deltaIdxMinus1 = 0
        if stRpsIdx == numShortTermRefPicSets {
            deltaIdxMinus1 = Int(try r.ue(max: UInt32(stRpsIdx - 1), "delta_idx_minus1"))
        }
        let refRpsIdx = stRpsIdx - (deltaIdxMinus1 + 1)
        guard refRpsIdx >= 0, refRpsIdx < previous.count else {
            throw BitstreamError.invalid("RefRpsIdx \(refRpsIdx) not available")
        }
        let ref = previous[refRpsIdx]
        let deltaRpsSign = try r.flag()
        let absDeltaRpsMinus1 = Int(try r.ue(max: 32767, "abs_delta_rps_minus1"))
        let deltaRps = (deltaRpsSign ? -1 : 1) * (absDeltaRpsMinus1 + 1)
        let n = ref.numDeltaPocs
        var usedByCurrPicFlag = [Bool](repeating: false, count: n + 1)
        var useDeltaFlag = [Bool](repeating: true, count: n + 1)
        for j in 0...n {
            usedByCurrPicFlag[j] = try r.flag()
            if !usedByCurrPicFlag[j] { useDeltaFlag[j] = try r.flag() }
        }
        derive(from: ref, deltaRps: deltaRps, used: usedByCurrPicFlag, useDelta: useDeltaFlag)
    }

    /// The lists of a predicted set (§7.4.8, eqs. 7-61 and 7-62): the reference set's pictures
    /// moved by `deltaRps`, and the reference set's own picture (index n), where `useDelta` keeps them.
    private mutating func derive(from ref: H265ShortTermRefPicSet, deltaRps: Int, used: [Bool], useDelta: [Bool]) {
        let refNeg = ref.numNegativePics, refPos = ref.numPositivePics, n = ref.numDeltaPocs
        // DeltaPocS0 / UsedByCurrPicS0 (eq. 7-61).
        for j in stride(from: refPos - 1, through: 0, by: -1) {
            let dPoc = ref.deltaPocS1[j] + deltaRps
            if dPoc < 0 && useDelta[refNeg + j] { deltaPocS0.append(dPoc); usedByCurrPicS0.append(used[refNeg + j]) }
        }
        if deltaRps < 0 && useDelta[n] { deltaPocS0.append(deltaRps); usedByCurrPicS0.append(used[n]) }
        for j in 0..<refNeg {
            let dPoc = ref.deltaPocS0[j] + deltaRps
            if dPoc < 0 && useDelta[j] { deltaPocS0.append(dPoc); usedByCurrPicS0.append(used[j]) }
        }
        // DeltaPocS1 / UsedByCurrPicS1 (eq. 7-62).
        for j in stride(from: refNeg - 1, through: 0, by: -1) {
            let dPoc = ref.deltaPocS0[j] + deltaRps
            if dPoc > 0 && useDelta[j] { deltaPocS1.append(dPoc); usedByCurrPicS1.append(used[j]) }
        }
        if deltaRps > 0 && useDelta[n] { deltaPocS1.append(deltaRps); usedByCurrPicS1.append(used[n]) }
        for j in 0..<refPos {
            let dPoc = ref.deltaPocS1[j] + deltaRps
            if dPoc > 0 && useDelta[refNeg + j] { deltaPocS1.append(dPoc); usedByCurrPicS1.append(used[refNeg + j]) }
        }
    }

    /// A set given picture by picture (inter_ref_pic_set_prediction_flag = 0, §7.3.7; eqs. 7-63, 7-64).
    private mutating func readExplicit(_ r: inout BitReader) throws {
        let max = Self.maxPictures
        let numNegativePics = Int(try r.ue(max: UInt32(max), "num_negative_pics"))
        let numPositivePics = Int(try r.ue(max: UInt32(max - numNegativePics), "num_positive_pics"))
        var poc = 0
        for _ in 0..<numNegativePics {
            poc -= Int(try r.ue(max: 32767, "delta_poc_s0_minus1")) + 1
            deltaPocS0.append(poc)
            usedByCurrPicS0.append(try r.flag())
        }
        poc = 0
        for _ in 0..<numPositivePics {
            poc += Int(try r.ue(max: 32767, "delta_poc_s1_minus1")) + 1
            deltaPocS1.append(poc)
            usedByCurrPicS1.append(try r.flag())
        }
    }
}

// MARK: - SPS

/// An H.265 sequence parameter set (`seq_parameter_set_rbsp`, ITU-T H.265 §7.3.2.2.1) with a VUI summary (Annex E.2.1).
public struct H265SPS: Sendable, Hashable {
    /// Default cap on the cropped picture width, in luma samples (``PictureSizeCap/default``).
    public static let defaultMaxPictureWidth = PictureSizeCap.default.width
    /// Default cap on the cropped picture height, in luma samples (``PictureSizeCap/default``).
    public static let defaultMaxPictureHeight = PictureSizeCap.default.height

    /// sps_video_parameter_set_id, 0...15 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsVideoParameterSetId: Int = 0
    /// sps_max_sub_layers_minus1: temporal sub-layers − 1, 0...6 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var maxSubLayersMinus1: Int = 0
    /// sps_temporal_id_nesting_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsTemporalIdNestingFlag: Bool = false
    /// general_profile_space, 0...3 (ITU-T H.265 §7.4.4).
    public private(set) var generalProfileSpace: Int = 0
    /// general_tier_flag: false Main tier, true High tier (ITU-T H.265 §7.4.4).
    public private(set) var generalTierFlag: Bool = false
    /// general_profile_idc: 1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions… (ITU-T H.265 §7.4.4, Annex A).
    public private(set) var generalProfileIdc: Int = 0
    /// general_profile_compatibility_flag[0...31], flag j in bit 31 − j (ITU-T H.265 §7.4.4).
    public private(set) var generalProfileCompatibilityFlags: UInt32 = 0
    /// general_progressive_source_flag (ITU-T H.265 §7.4.4).
    public private(set) var generalProgressiveSourceFlag: Bool = false
    /// general_interlaced_source_flag (ITU-T H.265 §7.4.4).
    public private(set) var generalInterlacedSourceFlag: Bool = false
    /// general_level_idc: thirty times the level number (e.g. 93 = level 3.1) (ITU-T H.265 §7.4.4, Annex A).
    public private(set) var generalLevelIdc: Int = 0
    /// sps_seq_parameter_set_id, 0...15 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var seqParameterSetId: Int = 0
    /// chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4 (ITU-T H.265 §7.4.3.2.1, Table 6-1).
    public private(set) var chromaFormatIdc: Int = 1
    /// separate_colour_plane_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var separateColourPlaneFlag: Bool = false
    /// pic_width_in_luma_samples, in pixels, a multiple of MinCbSizeY (ITU-T H.265 §7.4.3.2.1).
    public private(set) var picWidthInLumaSamples: Int = 0
    /// pic_height_in_luma_samples, in pixels, a multiple of MinCbSizeY (ITU-T H.265 §7.4.3.2.1).
    public private(set) var picHeightInLumaSamples: Int = 0
    /// conformance_window_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var conformanceWindowFlag: Bool = false
    /// conf_win_left_offset, in SubWidthC units (ITU-T H.265 §7.4.3.2.1).
    public private(set) var confWinLeftOffset: Int = 0
    /// conf_win_right_offset, in SubWidthC units (ITU-T H.265 §7.4.3.2.1).
    public private(set) var confWinRightOffset: Int = 0
    /// conf_win_top_offset, in SubHeightC units (ITU-T H.265 §7.4.3.2.1).
    public private(set) var confWinTopOffset: Int = 0
    /// conf_win_bottom_offset, in SubHeightC units (ITU-T H.265 §7.4.3.2.1).
    public private(set) var confWinBottomOffset: Int = 0
    /// Output width after the conformance window (pic_width − SubWidthC · (left + right)), in pixels (ITU-T H.265 §7.4.3.2.1).
    public private(set) var width: Int = 0
    /// Output height after the conformance window (pic_height − SubHeightC · (top + bottom)), in pixels (ITU-T H.265 §7.4.3.2.1).
    public private(set) var height: Int = 0
    /// BitDepthY = 8 + bit_depth_luma_minus8, in bits, 8...16 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var bitDepthLuma: Int = 8
    /// BitDepthC = 8 + bit_depth_chroma_minus8, in bits, 8...16 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var bitDepthChroma: Int = 8
    /// log2_max_pic_order_cnt_lsb_minus4 + 4: the length of slice_pic_order_cnt_lsb in bits, 4...16 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var log2MaxPicOrderCntLsb: Int = 4
    /// sps_sub_layer_ordering_info_present_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsSubLayerOrderingInfoPresentFlag: Bool = false
    /// sps_max_dec_pic_buffering_minus1 for the highest sub-layer: DPB size − 1, in pictures, 0...15 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsMaxDecPicBufferingMinus1: Int = 0
    /// sps_max_num_reorder_pics for the highest sub-layer, in pictures, 0...15 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsMaxNumReorderPics: Int = 0
    /// sps_max_latency_increase_plus1 for the highest sub-layer (0 = no limit), in pictures (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsMaxLatencyIncreasePlus1: Int = 0
    /// MinCbLog2SizeY = log2_min_luma_coding_block_size_minus3 + 3, log2 of luma samples, 3...6 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var log2MinLumaCodingBlockSize: Int = 3
    /// CtbLog2SizeY = MinCbLog2SizeY + log2_diff_max_min_luma_coding_block_size, log2 of luma samples, 3...6 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var log2CtbSize: Int = 4
    /// MinTbLog2SizeY = log2_min_luma_transform_block_size_minus2 + 2, log2 of luma samples (ITU-T H.265 §7.4.3.2.1).
    public private(set) var log2MinLumaTransformBlockSize: Int = 2
    /// MaxTbLog2SizeY = MinTbLog2SizeY + log2_diff_max_min_luma_transform_block_size, log2 of luma samples (ITU-T H.265 §7.4.3.2.1).
    public private(set) var log2MaxLumaTransformBlockSize: Int = 2
    /// max_transform_hierarchy_depth_inter (ITU-T H.265 §7.4.3.2.1).
    public private(set) var maxTransformHierarchyDepthInter: Int = 0
    /// max_transform_hierarchy_depth_intra (ITU-T H.265 §7.4.3.2.1).
    public private(set) var maxTransformHierarchyDepthIntra: Int = 0
    /// scaling_list_enabled_flag; any sps scaling_list_data is parsed and skipped (ITU-T H.265 §7.4.3.2.1).
    public private(set) var scalingListEnabledFlag: Bool = false
    /// amp_enabled_flag: asymmetric motion partitions (ITU-T H.265 §7.4.3.2.1).
    public private(set) var ampEnabledFlag: Bool = false
    /// sample_adaptive_offset_enabled_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var sampleAdaptiveOffsetEnabledFlag: Bool = false
    /// pcm_enabled_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var pcmEnabledFlag: Bool = false
    /// The short-term reference picture sets, num_short_term_ref_pic_sets (0...64) of them (ITU-T H.265 §7.3.7).
    public private(set) var shortTermRefPicSets: [H265ShortTermRefPicSet] = []
    /// long_term_ref_pics_present_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var longTermRefPicsPresentFlag: Bool = false
    /// num_long_term_ref_pics_sps, 0...32 (ITU-T H.265 §7.4.3.2.1).
    public private(set) var numLongTermRefPicsSps: Int = 0
    /// sps_temporal_mvp_enabled_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var spsTemporalMvpEnabledFlag: Bool = false
    /// strong_intra_smoothing_enabled_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var strongIntraSmoothingEnabledFlag: Bool = false

    /// vui_parameters_present_flag (ITU-T H.265 §7.4.3.2.1).
    public private(set) var vuiParametersPresentFlag: Bool = false
    private var sar: AspectRatio? = nil
    /// Sample (pixel) aspect ratio num:den from aspect_ratio_idc / sar_width:sar_height; nil when absent, unspecified or reserved (ITU-T H.265 §E.3.1, Table E-1).
    public var sampleAspectRatio: (num: Int, den: Int)? { sar.map { (num: $0.num, den: $0.den) } }
    /// video_format, 0...7; 5 (unspecified) when absent (ITU-T H.265 §E.3.1, Table E-2).
    public private(set) var videoFormat: Int = 5
    /// video_full_range_flag: true for full-range samples; false when absent (ITU-T H.265 §E.3.1).
    public private(set) var videoFullRangeFlag: Bool = false
    /// colour_primaries; 2 (unspecified) when absent (ITU-T H.265 §E.3.1, Table E-3).
    public private(set) var colourPrimaries: Int = 2
    /// transfer_characteristics; 2 (unspecified) when absent (ITU-T H.265 §E.3.1, Table E-4).
    public private(set) var transferCharacteristics: Int = 2
    /// matrix_coefficients; 2 (unspecified) when absent (ITU-T H.265 §E.3.1, Table E-5).
    public private(set) var matrixCoefficients: Int = 2
    /// field_seq_flag: the CVS conveys fields (ITU-T H.265 §E.3.1).
    public private(set) var fieldSeqFlag: Bool = false
    /// frame_field_info_present_flag: picture timing SEI carries pic_struct (ITU-T H.265 §E.3.1).
    public private(set) var frameFieldInfoPresentFlag: Bool = false
    /// vui_num_units_in_tick, in time_scale ticks; nil when timing info is absent (ITU-T H.265 §E.3.1).
    public private(set) var numUnitsInTick: UInt32? = nil
    /// vui_time_scale, in Hz; nil when timing info is absent (ITU-T H.265 §E.3.1).
    public private(set) var timeScale: UInt32? = nil
    /// vui_poc_proportional_to_timing_flag; false when absent (ITU-T H.265 §E.3.1).
    public private(set) var pocProportionalToTimingFlag: Bool = false
    /// vui_num_ticks_poc_diff_one_minus1 + 1, in clock ticks per POC unit; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var numTicksPocDiffOne: Int? = nil
    /// vui_hrd_parameters_present_flag (ITU-T H.265 §E.3.1).
    public private(set) var hrdParametersPresentFlag: Bool = false
    /// fixed_pic_rate_within_cvs_flag of the highest sub-layer (true when fixed_pic_rate_general_flag); false without HRD parameters (ITU-T H.265 §E.3.2).
    public private(set) var fixedFrameRateFlag: Bool = false
    /// bitstream_restriction_flag (ITU-T H.265 §E.3.1).
    public private(set) var bitstreamRestrictionFlag: Bool = false
    /// tiles_fixed_structure_flag; false when absent (ITU-T H.265 §E.3.1).
    public private(set) var tilesFixedStructureFlag: Bool = false
    /// motion_vectors_over_pic_boundaries_flag; nil when absent (inferred true) (ITU-T H.265 §E.3.1).
    public private(set) var motionVectorsOverPicBoundariesFlag: Bool? = nil
    /// restricted_ref_pic_lists_flag; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var restrictedRefPicListsFlag: Bool? = nil
    /// min_spatial_segmentation_idc, 0...4095; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var minSpatialSegmentationIdc: Int? = nil
    /// max_bytes_per_pic_denom, 0...16; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var maxBytesPerPicDenom: Int? = nil
    /// max_bits_per_min_cu_denom, 0...16; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var maxBitsPerMinCuDenom: Int? = nil
    /// log2_max_mv_length_horizontal, 0...15 (16 tolerated), log2 of quarter luma samples; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var log2MaxMvLengthHorizontal: Int? = nil
    /// log2_max_mv_length_vertical, 0...15 (16 tolerated), log2 of quarter luma samples; nil when absent (ITU-T H.265 §E.3.1).
    public private(set) var log2MaxMvLengthVertical: Int? = nil

    /// Frames per second = vui_time_scale / vui_num_units_in_tick (no factor 2 in H.265) when both are present and nonzero (ITU-T H.265 §E.3.1).
    public var frameRate: Double? {
        guard let n = numUnitsInTick, let t = timeScale, n > 0, t > 0 else { return nil }
        return Double(t) / Double(n)
    }
    /// ChromaArrayType: 0 when separateColourPlaneFlag, else chromaFormatIdc (ITU-T H.265 §7.4.3.2.1).
    public var chromaArrayType: Int { separateColourPlaneFlag ? 0 : chromaFormatIdc }
    /// num_short_term_ref_pic_sets, 0...64 (ITU-T H.265 §7.4.3.2.1).
    public var numShortTermRefPicSets: Int { shortTermRefPicSets.count }
    /// CtbSizeY, in luma samples (ITU-T H.265 §7.4.3.2.1).
    public var ctbSize: Int { 1 << log2CtbSize }
    /// PicWidthInCtbsY = Ceil(pic_width_in_luma_samples ÷ CtbSizeY), in CTBs (ITU-T H.265 §7.4.3.2.1).
    public var picWidthInCtbs: Int { h265CeilDiv(picWidthInLumaSamples, ctbSize) }
    /// PicHeightInCtbsY = Ceil(pic_height_in_luma_samples ÷ CtbSizeY), in CTBs (ITU-T H.265 §7.4.3.2.1).
    public var picHeightInCtbs: Int { h265CeilDiv(picHeightInLumaSamples, ctbSize) }
    /// PicSizeInCtbsY = PicWidthInCtbsY · PicHeightInCtbsY, in CTBs (ITU-T H.265 §7.4.3.2.1).
    public var picSizeInCtbsY: Int { picWidthInCtbs * picHeightInCtbs }

    /// Parses an SPS NAL unit (nal_unit_type 33, nuh_layer_id 0) as sent: escaped, header included, no start code (ITU-T H.265 §7.3.2.2.1).
    /// - Parameters:
    ///   - nalUnit: the NAL unit bytes.
    ///   - maxWidth: largest accepted cropped width in pixels; wider pictures throw `.unsupported`.
    ///   - maxHeight: largest accepted cropped height in pixels; taller pictures throw `.unsupported`.
    ///     The coded size may exceed the cap only up to the next multiple of 64.
    public init<C: Collection>(nalUnit: C, maxWidth: Int = PictureSizeCap.default.width,
                                    maxHeight: Int = PictureSizeCap.default.height) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH265NALHeader(&r)
        guard header.type == 33 else { throw BitstreamError.invalid("nal_unit_type \(header.type) is not an SPS (33)") }
        guard header.layerId == 0 else { throw BitstreamError.unsupported("SPS with nuh_layer_id \(header.layerId)") }

        spsVideoParameterSetId = Int(try r.bits(4))
        maxSubLayersMinus1 = Int(try r.bits(3))
        guard maxSubLayersMinus1 <= 6 else { throw BitstreamError.invalid("sps_max_sub_layers_minus1 = 7") }
        spsTemporalIdNestingFlag = try r.flag()
        try parseProfileTierLevel(&r)
        seqParameterSetId = Int(try r.ue(max: 15, "sps_seq_parameter_set_id"))
        chromaFormatIdc = Int(try r.ue(max: 3, "chroma_format_idc"))
        if chromaFormatIdc == 3 { separateColourPlaneFlag = try r.flag() }

        let w = Int(try r.ue())
        let h = Int(try r.ue())
        // Compared in units of 64 samples so that a huge cap cannot overflow.
        guard h265CeilDiv(w, 64) <= h265CeilDiv(maxWidth, 64), h265CeilDiv(h, 64) <= h265CeilDiv(maxHeight, 64) else {
            throw BitstreamError.unsupported("coded picture \(w)×\(h) exceeds the cap \(maxWidth)×\(maxHeight)")
        }
        guard w > 0, h > 0 else { throw BitstreamError.invalid("picture size \(w)×\(h)") }
        picWidthInLumaSamples = w
        picHeightInLumaSamples = h
        conformanceWindowFlag = try r.flag()
        if conformanceWindowFlag {
            // Each offset is < 2^32, so the sums below cannot overflow a 64-bit Int.
            confWinLeftOffset = Int(try r.ue())
            confWinRightOffset = Int(try r.ue())
            confWinTopOffset = Int(try r.ue())
            confWinBottomOffset = Int(try r.ue())
        }
        // Table 6-1.
        let subWidthC = (chromaArrayType == 1 || chromaArrayType == 2) ? 2 : 1
        let subHeightC = chromaArrayType == 1 ? 2 : 1
        let cropX = subWidthC * (confWinLeftOffset + confWinRightOffset)
        let cropY = subHeightC * (confWinTopOffset + confWinBottomOffset)
        guard cropX < w, cropY < h else {
            throw BitstreamError.invalid("conformance window (\(cropX)×\(cropY)) leaves no picture of \(w)×\(h)")
        }
        width = w - cropX
        height = h - cropY
        guard width <= maxWidth, height <= maxHeight else {
            throw BitstreamError.unsupported("picture \(width)×\(height) exceeds the cap \(maxWidth)×\(maxHeight)")
        }

        bitDepthLuma = 8 + Int(try r.ue(max: 8, "bit_depth_luma_minus8"))
        bitDepthChroma = 8 + Int(try r.ue(max: 8, "bit_depth_chroma_minus8"))
        log2MaxPicOrderCntLsb = 4 + Int(try r.ue(max: 12, "log2_max_pic_order_cnt_lsb_minus4"))
        spsSubLayerOrderingInfoPresentFlag = try r.flag()
        for _ in (spsSubLayerOrderingInfoPresentFlag ? 0 : maxSubLayersMinus1)...maxSubLayersMinus1 {
            // Ranges: MaxDpbSize − 1 ≤ 15 (§A.4.2); sps_max_num_reorder_pics is bounded by 15 rather than by
            // sps_max_dec_pic_buffering_minus1, which some encoders get wrong.
            spsMaxDecPicBufferingMinus1 = Int(try r.ue(max: 15, "sps_max_dec_pic_buffering_minus1"))
            spsMaxNumReorderPics = Int(try r.ue(max: 15, "sps_max_num_reorder_pics"))
            spsMaxLatencyIncreasePlus1 = Int(try r.ue())
        }

        log2MinLumaCodingBlockSize = 3 + Int(try r.ue(max: 3, "log2_min_luma_coding_block_size_minus3"))
        log2CtbSize = log2MinLumaCodingBlockSize + Int(try r.ue(max: 3, "log2_diff_max_min_luma_coding_block_size"))
        guard log2CtbSize <= 6 else { throw BitstreamError.invalid("CtbLog2SizeY = \(log2CtbSize) > 6") }
        let minCbSize = 1 << log2MinLumaCodingBlockSize
        guard w % minCbSize == 0, h % minCbSize == 0 else {
            throw BitstreamError.invalid("picture size \(w)×\(h) not a multiple of MinCbSizeY \(minCbSize)")
        }
        log2MinLumaTransformBlockSize = 2 + Int(try r.ue(max: 3, "log2_min_luma_transform_block_size_minus2"))
        log2MaxLumaTransformBlockSize = log2MinLumaTransformBlockSize + Int(try r.ue(max: 3, "log2_diff_max_min_luma_transform_block_size"))
        guard log2MinLumaTransformBlockSize < log2MinLumaCodingBlockSize, log2MaxLumaTransformBlockSize <= min(log2CtbSize, 5) else {
            throw BitstreamError.invalid("transform block sizes \(log2MinLumaTransformBlockSize)…\(log2MaxLumaTransformBlockSize)")
        }
        let maxDepth = UInt32(log2CtbSize - log2MinLumaTransformBlockSize)
        maxTransformHierarchyDepthInter = Int(try r.ue(max: maxDepth, "max_transform_hierarchy_depth_inter"))
        maxTransformHierarchyDepthIntra = Int(try r.ue(max: maxDepth, "max_transform_hierarchy_depth_intra"))
        scalingListEnabledFlag = try r.flag()
        if scalingListEnabledFlag {
            if try r.flag() { // sps_scaling_list_data_present_flag
                try skipH265ScalingListData(&r)
            }
        }
        ampEnabledFlag = try r.flag()
        sampleAdaptiveOffsetEnabledFlag = try r.flag()
        pcmEnabledFlag = try r.flag()
        if pcmEnabledFlag {
            try r.skip(8) // pcm_sample_bit_depth_luma_minus1 u(4), pcm_sample_bit_depth_chroma_minus1 u(4)
            _ = try r.ue(max: 2, "log2_min_pcm_luma_coding_block_size_minus3")
            _ = try r.ue(max: 2, "log2_diff_max_min_pcm_luma_coding_block_size")
            _ = try r.flag() // pcm_loop_filter_disabled_flag
        }
        let numSets = Int(try r.ue(max: 64, "num_short_term_ref_pic_sets"))
        var sets = [H265ShortTermRefPicSet]()
        sets.reserveCapacity(numSets)
        for i in 0..<numSets {
            sets.append(try H265ShortTermRefPicSet(&r, stRpsIdx: i, numShortTermRefPicSets: numSets, previous: sets))
        }
        shortTermRefPicSets = sets
        longTermRefPicsPresentFlag = try r.flag()
        if longTermRefPicsPresentFlag {
            numLongTermRefPicsSps = Int(try r.ue(max: 32, "num_long_term_ref_pics_sps"))
            // lt_ref_pic_poc_lsb_sps[i] u(v) and used_by_curr_pic_lt_sps_flag[i] u(1).
            try r.skip(numLongTermRefPicsSps * (log2MaxPicOrderCntLsb + 1))
        }
        spsTemporalMvpEnabledFlag = try r.flag()
        strongIntraSmoothingEnabledFlag = try r.flag()
        vuiParametersPresentFlag = try r.flag()
        if vuiParametersPresentFlag { try parseVUI(&r) }
        // sps_extension_present_flag and the extensions are not needed.
    }

    /// Parses profile_tier_level(1, sps_max_sub_layers_minus1) (ITU-T H.265 §7.3.3).
    private mutating func parseProfileTierLevel(_ r: inout BitReader) throws {
        generalProfileSpace = Int(try r.bits(2))
        generalTierFlag = try r.flag()
        generalProfileIdc = Int(try r.bits(5))
        generalProfileCompatibilityFlags = try r.bits(32)
        generalProgressiveSourceFlag = try r.flag()
        generalInterlacedSourceFlag = try r.flag()
        try r.skip(2) // general_non_packed_constraint_flag, general_frame_only_constraint_flag
        try r.skip(43 + 1) // constraint flags / reserved bits, general_inbld_flag or reserved bit
        generalLevelIdc = Int(try r.bits(8))
        var profilePresent = [Bool](repeating: false, count: 8)
        var levelPresent = [Bool](repeating: false, count: 8)
        for i in 0..<maxSubLayersMinus1 {
            profilePresent[i] = try r.flag()
            levelPresent[i] = try r.flag()
        }
        if maxSubLayersMinus1 > 0 {
            try r.skip(2 * (8 - maxSubLayersMinus1)) // reserved_zero_2bits
        }
        for i in 0..<maxSubLayersMinus1 {
            if profilePresent[i] { try r.skip(88) } // sub_layer profile space … inbld flag
            if levelPresent[i] { try r.skip(8) } // sub_layer_level_idc
        }
    }

    /// Parses vui_parameters() (ITU-T H.265 §E.2.1).
    private mutating func parseVUI(_ r: inout BitReader) throws {
        let prefix = try VUIPrefix(&r)   // aspect ratio … chroma location, shared with the other codec
        sar = prefix.sar
        videoFormat = prefix.videoFormat
        videoFullRangeFlag = prefix.videoFullRangeFlag
        colourPrimaries = prefix.colourPrimaries
        transferCharacteristics = prefix.transferCharacteristics
        matrixCoefficients = prefix.matrixCoefficients
        _ = try r.flag() // neutral_chroma_indication_flag
        fieldSeqFlag = try r.flag()
        frameFieldInfoPresentFlag = try r.flag()
        if try r.flag() { // default_display_window_flag
            for _ in 0..<4 { _ = try r.ue() } // def_disp_win_{left,right,top,bottom}_offset
        }
        if try r.flag() { // vui_timing_info_present_flag
            numUnitsInTick = try r.bits(32)
            timeScale = try r.bits(32)
            pocProportionalToTimingFlag = try r.flag()
            if pocProportionalToTimingFlag {
                numTicksPocDiffOne = Int(try r.ue()) + 1
            }
            hrdParametersPresentFlag = try r.flag()
            if hrdParametersPresentFlag {
                try parseHRDParameters(&r, commonInfPresentFlag: true, maxNumSubLayersMinus1: maxSubLayersMinus1)
            }
        }
        bitstreamRestrictionFlag = try r.flag()
        if bitstreamRestrictionFlag {
            tilesFixedStructureFlag = try r.flag()
            motionVectorsOverPicBoundariesFlag = try r.flag()
            restrictedRefPicListsFlag = try r.flag()
            minSpatialSegmentationIdc = Int(try r.ue(max: 4095, "min_spatial_segmentation_idc"))
            maxBytesPerPicDenom = Int(try r.ue(max: 16, "max_bytes_per_pic_denom"))
            maxBitsPerMinCuDenom = Int(try r.ue(max: 16, "max_bits_per_min_cu_denom"))
            log2MaxMvLengthHorizontal = Int(try r.ue(max: 16, "log2_max_mv_length_horizontal")) // 0...15, 16 tolerated as FFmpeg does
            log2MaxMvLengthVertical = Int(try r.ue(max: 16, "log2_max_mv_length_vertical"))
        }
    }

    /// Parses hrd_parameters(commonInfPresentFlag, maxNumSubLayersMinus1) (ITU-T H.265 §E.2.2), keeping only the fixed-rate flag.
    private mutating func parseHRDParameters(_ r: inout BitReader, commonInfPresentFlag: Bool, maxNumSubLayersMinus1: Int) throws {
        var nalHrd = false
        var vclHrd = false
        var subPicHrdParamsPresent = false
        if commonInfPresentFlag {
            nalHrd = try r.flag()
            vclHrd = try r.flag()
            if nalHrd || vclHrd {
                subPicHrdParamsPresent = try r.flag()
                if subPicHrdParamsPresent {
                    // tick_divisor_minus2 u(8), du_cpb_removal_delay_increment_length_minus1 u(5),
                    // sub_pic_cpb_params_in_pic_timing_sei_flag u(1), dpb_output_delay_du_length_minus1 u(5)
                    try r.skip(19)
                }
                try r.skip(8) // bit_rate_scale u(4), cpb_size_scale u(4)
                if subPicHrdParamsPresent { try r.skip(4) } // cpb_size_du_scale
                // initial_cpb_removal_delay_length_minus1, au_cpb_removal_delay_length_minus1,
                // dpb_output_delay_length_minus1: u(5) each.
                try r.skip(15)
            }
        }
        for _ in 0...maxNumSubLayersMinus1 {
            let fixedPicRateGeneral = try r.flag()
            var fixedPicRateWithinCvs = true
            if !fixedPicRateGeneral { fixedPicRateWithinCvs = try r.flag() }
            var lowDelayHrd = false
            if fixedPicRateWithinCvs {
                _ = try r.ue(max: 2047, "elemental_duration_in_tc_minus1")
            } else {
                lowDelayHrd = try r.flag()
            }
            var cpbCnt = 1
            if !lowDelayHrd { cpbCnt = Int(try r.ue(max: 31, "cpb_cnt_minus1")) + 1 }
            if nalHrd { try Self.skipSubLayerHRDParameters(&r, cpbCnt: cpbCnt, subPicHrdParamsPresent: subPicHrdParamsPresent) }
            if vclHrd { try Self.skipSubLayerHRDParameters(&r, cpbCnt: cpbCnt, subPicHrdParamsPresent: subPicHrdParamsPresent) }
            fixedFrameRateFlag = fixedPicRateWithinCvs // the last iteration is the highest sub-layer
        }
    }

    /// Parses and discards sub_layer_hrd_parameters() (ITU-T H.265 §E.2.3).
    private static func skipSubLayerHRDParameters(_ r: inout BitReader, cpbCnt: Int, subPicHrdParamsPresent: Bool) throws {
        for _ in 0..<cpbCnt {
            _ = try r.ue() // bit_rate_value_minus1
            _ = try r.ue() // cpb_size_value_minus1
            if subPicHrdParamsPresent {
                _ = try r.ue() // cpb_size_du_value_minus1
                _ = try r.ue() // bit_rate_du_value_minus1
            }
            _ = try r.flag() // cbr_flag
        }
    }
}

// MARK: - PPS

/// An H.265 picture parameter set (`pic_parameter_set_rbsp`, ITU-T H.265 §7.3.2.3.1), parsed through
/// slice_segment_header_extension_present_flag (extensions are not read).
public struct H265PPS: Sendable, Hashable {
    /// pps_pic_parameter_set_id, 0...63 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsPicParameterSetId: Int = 0
    /// pps_seq_parameter_set_id, 0...15 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsSeqParameterSetId: Int = 0
    /// dependent_slice_segments_enabled_flag: slice segment headers may carry dependent_slice_segment_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var dependentSliceSegmentsEnabledFlag: Bool = false
    /// output_flag_present_flag: slice headers carry pic_output_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var outputFlagPresentFlag: Bool = false
    /// num_extra_slice_header_bits, in bits, 0...7 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var numExtraSliceHeaderBits: Int = 0
    /// sign_data_hiding_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var signDataHidingEnabledFlag: Bool = false
    /// cabac_init_present_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var cabacInitPresentFlag: Bool = false
    /// num_ref_idx_l0_default_active_minus1, 0...14 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var numRefIdxL0DefaultActiveMinus1: Int = 0
    /// num_ref_idx_l1_default_active_minus1, 0...14 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var numRefIdxL1DefaultActiveMinus1: Int = 0
    /// init_qp_minus26, in QP units (ITU-T H.265 §7.4.3.3.1).
    public private(set) var initQpMinus26: Int = 0
    /// constrained_intra_pred_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var constrainedIntraPredFlag: Bool = false
    /// transform_skip_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var transformSkipEnabledFlag: Bool = false
    /// cu_qp_delta_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var cuQpDeltaEnabledFlag: Bool = false
    /// diff_cu_qp_delta_depth, 0...3; 0 when absent (ITU-T H.265 §7.4.3.3.1).
    public private(set) var diffCuQpDeltaDepth: Int = 0
    /// pps_cb_qp_offset, in QP units, −12...12 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsCbQpOffset: Int = 0
    /// pps_cr_qp_offset, in QP units, −12...12 (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsCrQpOffset: Int = 0
    /// pps_slice_chroma_qp_offsets_present_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsSliceChromaQpOffsetsPresentFlag: Bool = false
    /// weighted_pred_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var weightedPredFlag: Bool = false
    /// weighted_bipred_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var weightedBipredFlag: Bool = false
    /// transquant_bypass_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var transquantBypassEnabledFlag: Bool = false
    /// tiles_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var tilesEnabledFlag: Bool = false
    /// entropy_coding_sync_enabled_flag (wavefront parallel processing) (ITU-T H.265 §7.4.3.3.1).
    public private(set) var entropyCodingSyncEnabledFlag: Bool = false
    /// num_tile_columns_minus1; 0 when tiles are disabled (ITU-T H.265 §7.4.3.3.1).
    public private(set) var numTileColumnsMinus1: Int = 0
    /// num_tile_rows_minus1; 0 when tiles are disabled (ITU-T H.265 §7.4.3.3.1).
    public private(set) var numTileRowsMinus1: Int = 0
    /// pps_loop_filter_across_slices_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsLoopFilterAcrossSlicesEnabledFlag: Bool = false
    /// deblocking_filter_control_present_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var deblockingFilterControlPresentFlag: Bool = false
    /// deblocking_filter_override_enabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var deblockingFilterOverrideEnabledFlag: Bool = false
    /// pps_deblocking_filter_disabled_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var ppsDeblockingFilterDisabledFlag: Bool = false
    /// lists_modification_present_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var listsModificationPresentFlag: Bool = false
    /// log2_parallel_merge_level_minus2 + 2, log2 of luma samples (ITU-T H.265 §7.4.3.3.1).
    public private(set) var log2ParallelMergeLevel: Int = 2
    /// slice_segment_header_extension_present_flag (ITU-T H.265 §7.4.3.3.1).
    public private(set) var sliceSegmentHeaderExtensionPresentFlag: Bool = false

    /// Parses a PPS NAL unit (nal_unit_type 34) as sent: escaped, header included, no start code (ITU-T H.265 §7.3.2.3.1).
    public init<C: Collection>(nalUnit: C) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH265NALHeader(&r)
        guard header.type == 34 else { throw BitstreamError.invalid("nal_unit_type \(header.type) is not a PPS (34)") }

        ppsPicParameterSetId = Int(try r.ue(max: 63, "pps_pic_parameter_set_id"))
        ppsSeqParameterSetId = Int(try r.ue(max: 15, "pps_seq_parameter_set_id"))
        dependentSliceSegmentsEnabledFlag = try r.flag()
        outputFlagPresentFlag = try r.flag()
        numExtraSliceHeaderBits = Int(try r.bits(3))
        signDataHidingEnabledFlag = try r.flag()
        cabacInitPresentFlag = try r.flag()
        numRefIdxL0DefaultActiveMinus1 = Int(try r.ue(max: 14, "num_ref_idx_l0_default_active_minus1"))
        numRefIdxL1DefaultActiveMinus1 = Int(try r.ue(max: 14, "num_ref_idx_l1_default_active_minus1"))
        initQpMinus26 = Int(try r.se())
        // −(26 + QpBdOffsetY) with QpBdOffsetY ≤ 48 (16-bit luma).
        guard (-74...25).contains(initQpMinus26) else {
            throw BitstreamError.invalid("init_qp_minus26 = \(initQpMinus26) outside -74...25")
        }
        constrainedIntraPredFlag = try r.flag()
        transformSkipEnabledFlag = try r.flag()
        cuQpDeltaEnabledFlag = try r.flag()
        if cuQpDeltaEnabledFlag { diffCuQpDeltaDepth = Int(try r.ue(max: 3, "diff_cu_qp_delta_depth")) }
        ppsCbQpOffset = Int(try r.se())
        ppsCrQpOffset = Int(try r.se())
        guard (-12...12).contains(ppsCbQpOffset), (-12...12).contains(ppsCrQpOffset) else {
            throw BitstreamError.invalid("pps_cb/cr_qp_offset \(ppsCbQpOffset)/\(ppsCrQpOffset) outside -12...12")
        }
        ppsSliceChromaQpOffsetsPresentFlag = try r.flag()
        weightedPredFlag = try r.flag()
        weightedBipredFlag = try r.flag()
        transquantBypassEnabledFlag = try r.flag()
        tilesEnabledFlag = try r.flag()
        entropyCodingSyncEnabledFlag = try r.flag()
        if tilesEnabledFlag {
            // Bounded by PicWidthInCtbsY/PicHeightInCtbsY, unknown here; 1024 CTBs covers any capped picture.
            numTileColumnsMinus1 = Int(try r.ue(max: 1023, "num_tile_columns_minus1"))
            numTileRowsMinus1 = Int(try r.ue(max: 1023, "num_tile_rows_minus1"))
            let uniformSpacingFlag = try r.flag()
            if !uniformSpacingFlag {
                for _ in 0..<numTileColumnsMinus1 { _ = try r.ue() } // column_width_minus1[i]
                for _ in 0..<numTileRowsMinus1 { _ = try r.ue() } // row_height_minus1[i]
            }
            _ = try r.flag() // loop_filter_across_tiles_enabled_flag
        }
        ppsLoopFilterAcrossSlicesEnabledFlag = try r.flag()
        deblockingFilterControlPresentFlag = try r.flag()
        if deblockingFilterControlPresentFlag {
            deblockingFilterOverrideEnabledFlag = try r.flag()
            ppsDeblockingFilterDisabledFlag = try r.flag()
            if !ppsDeblockingFilterDisabledFlag {
                let beta = try r.se() // pps_beta_offset_div2
                let tc = try r.se() // pps_tc_offset_div2
                guard (-6...6).contains(beta), (-6...6).contains(tc) else {
                    throw BitstreamError.invalid("pps_beta/tc_offset_div2 \(beta)/\(tc) outside -6...6")
                }
            }
        }
        if try r.flag() { // pps_scaling_list_data_present_flag
            try skipH265ScalingListData(&r)
        }
        listsModificationPresentFlag = try r.flag()
        log2ParallelMergeLevel = 2 + Int(try r.ue(max: 4, "log2_parallel_merge_level_minus2"))
        sliceSegmentHeaderExtensionPresentFlag = try r.flag()
    }
}

// MARK: - Slice segment header start

/// The first fields of an H.265 slice segment header (`slice_segment_header()`, ITU-T H.265 §7.3.6.1), through
/// slice_pic_order_cnt_lsb for independent slice segments.
public struct H265SliceSegmentHeaderStart: Sendable, Hashable {
    /// nal_unit_type from the NAL unit header: 0...9 non-IRAP, 16...21 IRAP (BLA, IDR, CRA) (ITU-T H.265 §7.4.2.2, Table 7-1).
    public private(set) var nalUnitType: Int = 0
    /// nuh_layer_id from the NAL unit header, 0...62 (ITU-T H.265 §7.4.2.2).
    public private(set) var nuhLayerId: Int = 0
    /// nuh_temporal_id_plus1 from the NAL unit header, 1...7 (TemporalId + 1) (ITU-T H.265 §7.4.2.2).
    public private(set) var temporalIdPlus1: Int = 1
    /// first_slice_segment_in_pic_flag: this is the first slice segment of a picture (ITU-T H.265 §7.4.7.1).
    public private(set) var firstSliceSegmentInPicFlag: Bool = false
    /// no_output_of_prior_pics_flag; nil unless the NAL unit is IRAP (nal_unit_type 16...23) (ITU-T H.265 §7.4.7.1).
    public private(set) var noOutputOfPriorPicsFlag: Bool? = nil
    /// slice_pic_parameter_set_id, 0...63 (ITU-T H.265 §7.4.7.1).
    public private(set) var slicePicParameterSetId: Int = 0
    /// dependent_slice_segment_flag (false when absent); nil when the PPS is unknown and this is not the first segment (ITU-T H.265 §7.4.7.1).
    public private(set) var dependentSliceSegmentFlag: Bool? = nil
    /// slice_segment_address, in CTBs in raster scan (0 for the first segment); nil when the PPS or SPS is unknown (ITU-T H.265 §7.4.7.1).
    public private(set) var sliceSegmentAddress: Int? = nil
    /// slice_type: 0 B, 1 P, 2 I; nil for dependent slice segments or unknown PPS/SPS (ITU-T H.265 §7.4.7.1, Table 7-7).
    public private(set) var sliceType: Int? = nil
    /// pic_output_flag (true when absent); nil for dependent slice segments or unknown PPS/SPS (ITU-T H.265 §7.4.7.1).
    public private(set) var picOutputFlag: Bool? = nil
    /// colour_plane_id, 0...2; nil unless the SPS has separate_colour_plane_flag (ITU-T H.265 §7.4.7.1).
    public private(set) var colourPlaneId: Int? = nil
    /// slice_pic_order_cnt_lsb, in POC units (modulo MaxPicOrderCntLsb); nil for IDR pictures, dependent slice segments or unknown PPS/SPS (ITU-T H.265 §7.4.7.1).
    public private(set) var slicePicOrderCntLsb: Int? = nil

    /// True for IRAP NAL unit types 16...23 (BLA, IDR, CRA, reserved IRAP) (ITU-T H.265 §7.4.2.2).
    public var isIRAP: Bool { nalUnitType >= 16 && nalUnitType <= 23 }
    /// True for IDR_W_RADL (19) and IDR_N_LP (20) (ITU-T H.265 §7.4.2.2).
    public var isIDR: Bool { nalUnitType == 19 || nalUnitType == 20 }

    /// Parses the start of a slice segment header from a VCL NAL unit (nal_unit_type 0...9 or 16...21) as sent:
    /// escaped, header included, no start code (ITU-T H.265 §7.3.6.1).
    /// When the PPS or its SPS is not in the dictionaries, the fields that need them are left nil.
    /// - Parameters:
    ///   - spsByID: known SPSs keyed by sps_seq_parameter_set_id.
    ///   - ppsByID: known PPSs keyed by pps_pic_parameter_set_id.
    public init<C: Collection>(nalUnit: C, spsByID: [Int: H265SPS], ppsByID: [Int: H265PPS]) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH265NALHeader(&r)
        switch header.type {
        case 0...9, 16...21: break
        case 10...15, 22...31: throw BitstreamError.unsupported("reserved VCL nal_unit_type \(header.type)")
        default: throw BitstreamError.invalid("nal_unit_type \(header.type) is not a slice segment")
        }
        nalUnitType = header.type
        nuhLayerId = header.layerId
        temporalIdPlus1 = header.temporalIdPlus1

        firstSliceSegmentInPicFlag = try r.flag()
        if nalUnitType >= 16 && nalUnitType <= 23 { noOutputOfPriorPicsFlag = try r.flag() }
        slicePicParameterSetId = Int(try r.ue(max: 63, "slice_pic_parameter_set_id"))
        if firstSliceSegmentInPicFlag {
            dependentSliceSegmentFlag = false
            sliceSegmentAddress = 0
        }

        guard let pps = ppsByID[slicePicParameterSetId] else { return }
        var dependent = false
        if !firstSliceSegmentInPicFlag && pps.dependentSliceSegmentsEnabledFlag {
            dependent = try r.flag()
        }
        dependentSliceSegmentFlag = dependent
        guard let sps = spsByID[pps.ppsSeqParameterSetId] else { return }

        if !firstSliceSegmentInPicFlag {
            let picSize = sps.picSizeInCtbsY
            let addressBits = h265CeilLog2(picSize)
            guard addressBits <= 32 else { throw BitstreamError.unsupported("PicSizeInCtbsY \(picSize) too large") }
            let address = Int(try r.bits(addressBits))
            guard address < picSize else {
                throw BitstreamError.invalid("slice_segment_address = \(address) ≥ PicSizeInCtbsY \(picSize)")
            }
            sliceSegmentAddress = address
        }
        if !dependent {
            try r.skip(pps.numExtraSliceHeaderBits) // slice_reserved_flag[i]
            let type = Int(try r.ue(max: 2, "slice_type"))
            var output = true
            if pps.outputFlagPresentFlag { output = try r.flag() }
            if sps.separateColourPlaneFlag {
                let id = Int(try r.bits(2))
                guard id <= 2 else { throw BitstreamError.invalid("colour_plane_id = 3") }
                colourPlaneId = id
            }
            if !isIDR {
                slicePicOrderCntLsb = Int(try r.bits(sps.log2MaxPicOrderCntLsb))
            }
            sliceType = type
            picOutputFlag = output
        }
    }
}
