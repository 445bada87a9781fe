// H.264 sequence/picture parameter sets and the start of the slice header.
//
// Syntax: ITU-T H.264 (08/2021) §7.3.2.1.1 (SPS), §7.3.2.2 (PPS), §7.3.3 (slice header),
// Annex E.1.1 (VUI) and E.1.2 (HRD). Every parser takes one NAL unit as sent (escaped,
// header byte included, no start code), removes emulation prevention with `RBSP.unescape`,
// and throws `BitstreamError` on truncated or out-of-range input. Every `ue(v)` used as a
// loop count or array size is range-checked first; all arithmetic is done on values whose
// range has been checked so that nothing can overflow.

// MARK: - Shared private helpers

/// Reads the one-byte H.264 NAL unit header (§7.3.1) and returns (nal_ref_idc, nal_unit_type).
private func readH264NALHeader(_ r: inout BitReader) throws -> (refIdc: Int, type: Int) {
    if try r.flag() { throw BitstreamError.invalid("forbidden_zero_bit = 1") }
    let refIdc = Int(try r.bits(2))
    let type = Int(try r.bits(5))
    return (refIdc, type)
}

/// ceil(a / b) for a ≥ 0, b > 0, without overflow; 0 for negative a.
private func h264CeilDiv(_ a: Int, _ b: Int) -> Int {
    guard a > 0 else { return 0 }
    return a / b + (a % b == 0 ? 0 : 1)
}

// MARK: - SPS

/// An H.264 sequence parameter set (`seq_parameter_set_rbsp`, ITU-T H.264 §7.3.2.1.1) with a VUI summary (Annex E.1.1).
public struct H264SPS: Sendable, Hashable {
    /// Default cap on the cropped picture width, in luma samples (``PictureSizeCap/default``).
    public static let defaultMaxPictureWidth = PictureSizeCap.default.width
    /// Default cap on the cropped picture height, in luma samples (``PictureSizeCap/default``).
    public static let defaultMaxPictureHeight = PictureSizeCap.default.height

    /// nal_ref_idc of the SPS NAL unit, 0...3 (ITU-T H.264 §7.4.1).
    public private(set) var nalRefIdc: Int = 0
    /// profile_idc, e.g. 66 Baseline, 77 Main, 100 High (ITU-T H.264 §7.4.2.1.1, Annex A).
    public private(set) var profileIdc: Int = 0
    /// constraint_set0_flag…constraint_set5_flag and reserved_zero_2bits as one byte, constraint_set0_flag in the MSB (ITU-T H.264 §7.3.2.1.1).
    public private(set) var constraintFlags: UInt8 = 0
    /// level_idc, ten times the level number (e.g. 31 = level 3.1; 9 = level 1b) (ITU-T H.264 §7.4.2.1.1, Annex A).
    public private(set) var levelIdc: Int = 0
    /// seq_parameter_set_id, 0...31 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var seqParameterSetId: Int = 0
    /// chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4; 1 when absent (ITU-T H.264 §7.4.2.1.1, Table 6-1).
    public private(set) var chromaFormatIdc: Int = 1
    /// separate_colour_plane_flag: 4:4:4 coded as three separate colour planes (ITU-T H.264 §7.4.2.1.1).
    public private(set) var separateColourPlaneFlag: Bool = false
    /// BitDepthY = 8 + bit_depth_luma_minus8, in bits, 8...14 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var bitDepthLuma: Int = 8
    /// BitDepthC = 8 + bit_depth_chroma_minus8, in bits, 8...14 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var bitDepthChroma: Int = 8
    /// qpprime_y_zero_transform_bypass_flag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var qpprimeYZeroTransformBypassFlag: Bool = false
    /// seq_scaling_matrix_present_flag; the lists themselves are parsed and skipped (ITU-T H.264 §7.3.2.1.1.1).
    public private(set) var seqScalingMatrixPresentFlag: Bool = false
    /// log2_max_frame_num_minus4 + 4: the length of frame_num in bits, 4...16 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var log2MaxFrameNum: Int = 4
    /// pic_order_cnt_type, 0...2 (ITU-T H.264 §7.4.2.1.1, §8.2.1).
    public private(set) var picOrderCntType: Int = 0
    /// log2_max_pic_order_cnt_lsb_minus4 + 4: the length of pic_order_cnt_lsb in bits, 4...16; nil unless picOrderCntType == 0 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var log2MaxPicOrderCntLsb: Int? = nil
    /// delta_pic_order_always_zero_flag; false unless picOrderCntType == 1 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var deltaPicOrderAlwaysZeroFlag: Bool = false
    /// offset_for_non_ref_pic, in picture order count units; 0 unless picOrderCntType == 1 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var offsetForNonRefPic: Int = 0
    /// offset_for_top_to_bottom_field, in picture order count units; 0 unless picOrderCntType == 1 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var offsetForTopToBottomField: Int = 0
    /// offset_for_ref_frame[i] for i < num_ref_frames_in_pic_order_cnt_cycle (≤ 255 entries), in POC units; empty unless picOrderCntType == 1 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var offsetForRefFrame: [Int] = []
    /// max_num_ref_frames, in frames, 0...16 (ITU-T H.264 §7.4.2.1.1).
    public private(set) var maxNumRefFrames: Int = 0
    /// gaps_in_frame_num_value_allowed_flag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var gapsInFrameNumValueAllowedFlag: Bool = false
    /// pic_width_in_mbs_minus1, in macroblocks (ITU-T H.264 §7.4.2.1.1).
    public private(set) var picWidthInMbsMinus1: Int = 0
    /// pic_height_in_map_units_minus1, in slice group map units (ITU-T H.264 §7.4.2.1.1).
    public private(set) var picHeightInMapUnitsMinus1: Int = 0
    /// frame_mbs_only_flag: every coded picture is a frame (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameMbsOnlyFlag: Bool = true
    /// mb_adaptive_frame_field_flag (MBAFF); false when frameMbsOnlyFlag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var mbAdaptiveFrameFieldFlag: Bool = false
    /// direct_8x8_inference_flag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var direct8x8InferenceFlag: Bool = false
    /// frame_cropping_flag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameCroppingFlag: Bool = false
    /// frame_crop_left_offset, in CropUnitX units (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameCropLeftOffset: Int = 0
    /// frame_crop_right_offset, in CropUnitX units (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameCropRightOffset: Int = 0
    /// frame_crop_top_offset, in CropUnitY units (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameCropTopOffset: Int = 0
    /// frame_crop_bottom_offset, in CropUnitY units (ITU-T H.264 §7.4.2.1.1).
    public private(set) var frameCropBottomOffset: Int = 0
    /// Decoded frame width PicWidthInSamplesL = PicWidthInMbs * 16, in luma samples (pixels), before cropping (ITU-T H.264 §7.4.2.1.1).
    public private(set) var codedWidth: Int = 0
    /// Decoded frame height FrameHeightInMbs * 16, in luma samples (pixels), before cropping (ITU-T H.264 §7.4.2.1.1).
    public private(set) var codedHeight: Int = 0
    /// Displayed width after frame cropping (codedWidth − CropUnitX · (left + right)), in pixels (ITU-T H.264 §7.4.2.1.1).
    public private(set) var width: Int = 0
    /// Displayed height after frame cropping (codedHeight − CropUnitY · (top + bottom)), in pixels (ITU-T H.264 §7.4.2.1.1).
    public private(set) var height: Int = 0

    /// vui_parameters_present_flag (ITU-T H.264 §7.4.2.1.1).
    public private(set) var vuiParametersPresentFlag: Bool = false
    private var sar: AspectRatio? = nil
    /// Sample (pixel) aspect ratio num:den from aspect_ratio_idc / sar_width:sar_height; nil when absent, unspecified or reserved (ITU-T H.264 §E.2.1, Table E-1).
    public var sampleAspectRatio: (num: Int, den: Int)? { sar.map { (num: $0.num, den: $0.den) } }
    /// video_format, 0...7; 5 (unspecified) when absent (ITU-T H.264 §E.2.1, Table E-2).
    public private(set) var videoFormat: Int = 5
    /// video_full_range_flag: true for full-range (0...255) samples; false when absent (ITU-T H.264 §E.2.1).
    public private(set) var videoFullRangeFlag: Bool = false
    /// colour_primaries; 2 (unspecified) when absent (ITU-T H.264 §E.2.1, Table E-3).
    public private(set) var colourPrimaries: Int = 2
    /// transfer_characteristics; 2 (unspecified) when absent (ITU-T H.264 §E.2.1, Table E-4).
    public private(set) var transferCharacteristics: Int = 2
    /// matrix_coefficients; 2 (unspecified) when absent (ITU-T H.264 §E.2.1, Table E-5).
    public private(set) var matrixCoefficients: Int = 2
    /// num_units_in_tick, in time_scale ticks; nil when timing info is absent (ITU-T H.264 §E.2.1).
    public private(set) var numUnitsInTick: UInt32? = nil
    /// time_scale, in Hz; nil when timing info is absent (ITU-T H.264 §E.2.1).
    public private(set) var timeScale: UInt32? = nil
    /// fixed_frame_rate_flag; false when absent (ITU-T H.264 §E.2.1).
    public private(set) var fixedFrameRateFlag: Bool = false
    /// nal_hrd_parameters_present_flag (ITU-T H.264 §E.2.1).
    public private(set) var nalHrdParametersPresentFlag: Bool = false
    /// vcl_hrd_parameters_present_flag (ITU-T H.264 §E.2.1).
    public private(set) var vclHrdParametersPresentFlag: Bool = false
    /// low_delay_hrd_flag; false when absent (ITU-T H.264 §E.2.1).
    public private(set) var lowDelayHrdFlag: Bool = false
    /// pic_struct_present_flag: picture timing SEI carries pic_struct (ITU-T H.264 §E.2.1).
    public private(set) var picStructPresentFlag: Bool = false
    /// bitstream_restriction_flag (ITU-T H.264 §E.2.1).
    public private(set) var bitstreamRestrictionFlag: Bool = false
    /// max_num_reorder_frames, in frames; nil when bitstream restriction info is absent (ITU-T H.264 §E.2.1).
    public private(set) var maxNumReorderFrames: Int? = nil
    /// max_dec_frame_buffering, in frame buffers; nil when bitstream restriction info is absent (ITU-T H.264 §E.2.1).
    public private(set) var maxDecFrameBuffering: Int? = nil

    /// Frames per second = time_scale / (2 · num_units_in_tick) when both are present and nonzero (ITU-T H.264 §E.2.1, one frame = two field ticks).
    public var frameRate: Double? {
        guard let n = numUnitsInTick, let t = timeScale, n > 0, t > 0 else { return nil }
        return Double(t) / (2 * Double(n))
    }

    /// ChromaArrayType: 0 when separateColourPlaneFlag, else chromaFormatIdc (ITU-T H.264 §7.4.2.1.1).
    public var chromaArrayType: Int { separateColourPlaneFlag ? 0 : chromaFormatIdc }
    /// PicWidthInMbs, in macroblocks (ITU-T H.264 §7.4.2.1.1).
    public var picWidthInMbs: Int { picWidthInMbsMinus1 + 1 }
    /// FrameHeightInMbs = (2 − frame_mbs_only_flag) · PicHeightInMapUnits, in macroblocks (ITU-T H.264 §7.4.2.1.1).
    public var frameHeightInMbs: Int { (frameMbsOnlyFlag ? 1 : 2) * (picHeightInMapUnitsMinus1 + 1) }
    /// MaxFrameNum = 2^log2MaxFrameNum, in frame_num units (ITU-T H.264 §7.4.2.1.1).
    public var maxFrameNum: Int { 1 << log2MaxFrameNum }

    /// Parses an SPS NAL unit (nal_unit_type 7) as sent: escaped, header byte included, no start code (ITU-T H.264 §7.3.2.1.1).
    /// - Parameters:
    ///   - nalUnit: the NAL unit bytes.
    ///   - maxWidth: largest accepted cropped width in pixels; wider pictures throw `.unsupported`.
    ///   - maxHeight: largest accepted cropped height in pixels; taller pictures throw `.unsupported`.
    ///     The coded size may exceed the cap only by the macroblock rounding (16 across, 32 down).
    public init<C: Collection>(nalUnit: C, maxWidth: Int = PictureSizeCap.default.width,
                                    maxHeight: Int = PictureSizeCap.default.height) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH264NALHeader(&r)
        guard header.type == 7 else { throw BitstreamError.invalid("nal_unit_type \(header.type) is not an SPS (7)") }
        nalRefIdc = header.refIdc

        profileIdc = Int(try r.bits(8))
        constraintFlags = UInt8(try r.bits(8))
        levelIdc = Int(try r.bits(8))
        seqParameterSetId = Int(try r.ue(max: 31, "seq_parameter_set_id"))

        switch profileIdc {
        case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
            chromaFormatIdc = Int(try r.ue(max: 3, "chroma_format_idc"))
            if chromaFormatIdc == 3 { separateColourPlaneFlag = try r.flag() }
            bitDepthLuma = 8 + Int(try r.ue(max: 6, "bit_depth_luma_minus8"))
            bitDepthChroma = 8 + Int(try r.ue(max: 6, "bit_depth_chroma_minus8"))
            qpprimeYZeroTransformBypassFlag = try r.flag()
            seqScalingMatrixPresentFlag = try r.flag()
            if seqScalingMatrixPresentFlag {
                for i in 0..<(chromaFormatIdc != 3 ? 8 : 12) {
                    if try r.flag() { // seq_scaling_list_present_flag[i]
                        try Self.skipScalingList(&r, size: i < 6 ? 16 : 64)
                    }
                }
            }
        default:
            break
        }

        log2MaxFrameNum = 4 + Int(try r.ue(max: 12, "log2_max_frame_num_minus4"))
        picOrderCntType = Int(try r.ue(max: 2, "pic_order_cnt_type"))
        if picOrderCntType == 0 {
            log2MaxPicOrderCntLsb = 4 + Int(try r.ue(max: 12, "log2_max_pic_order_cnt_lsb_minus4"))
        } else if picOrderCntType == 1 {
            deltaPicOrderAlwaysZeroFlag = try r.flag()
            offsetForNonRefPic = Int(try r.se())
            offsetForTopToBottomField = Int(try r.se())
            let n = Int(try r.ue(max: 255, "num_ref_frames_in_pic_order_cnt_cycle"))
            var offsets = [Int]()
            offsets.reserveCapacity(n)
            for _ in 0..<n { offsets.append(Int(try r.se())) }
            offsetForRefFrame = offsets
        }
        maxNumRefFrames = Int(try r.ue(max: 16, "max_num_ref_frames"))
        gapsInFrameNumValueAllowedFlag = try r.flag()

        // Sizes: check the macroblock counts against the cap before multiplying.
        let widthMbsCap = h264CeilDiv(maxWidth, 16)
        let heightMbsCap = h264CeilDiv(maxHeight, 32) * 2
        let widthMinus1 = try r.ue()
        let heightMinus1 = try r.ue()
        guard Int(widthMinus1) < widthMbsCap else {
            throw BitstreamError.unsupported("pic_width_in_mbs_minus1 = \(widthMinus1) exceeds the width cap \(maxWidth)")
        }
        picWidthInMbsMinus1 = Int(widthMinus1)
        frameMbsOnlyFlag = try r.flag()
        guard (Int(heightMinus1) + 1) * (frameMbsOnlyFlag ? 1 : 2) <= heightMbsCap else {
            throw BitstreamError.unsupported("pic_height_in_map_units_minus1 = \(heightMinus1) exceeds the height cap \(maxHeight)")
        }
        picHeightInMapUnitsMinus1 = Int(heightMinus1)
        if !frameMbsOnlyFlag { mbAdaptiveFrameFieldFlag = try r.flag() }
        direct8x8InferenceFlag = try r.flag()
        codedWidth = picWidthInMbs * 16
        codedHeight = frameHeightInMbs * 16

        frameCroppingFlag = try r.flag()
        if frameCroppingFlag {
            // Each offset is < 2^32, so the sums below cannot overflow a 64-bit Int.
            frameCropLeftOffset = Int(try r.ue())
            frameCropRightOffset = Int(try r.ue())
            frameCropTopOffset = Int(try r.ue())
            frameCropBottomOffset = Int(try r.ue())
        }
        // CropUnitX / CropUnitY, §7.4.2.1.1.
        let cropUnitX: Int
        let cropUnitY: Int
        if chromaArrayType == 0 {
            cropUnitX = 1
            cropUnitY = frameMbsOnlyFlag ? 1 : 2
        } else {
            let subWidthC = chromaFormatIdc == 3 ? 1 : 2
            let subHeightC = chromaFormatIdc == 1 ? 2 : 1
            cropUnitX = subWidthC
            cropUnitY = subHeightC * (frameMbsOnlyFlag ? 1 : 2)
        }
        let cropX = cropUnitX * (frameCropLeftOffset + frameCropRightOffset)
        let cropY = cropUnitY * (frameCropTopOffset + frameCropBottomOffset)
        guard cropX < codedWidth, cropY < codedHeight else {
            throw BitstreamError.invalid("frame cropping (\(cropX)×\(cropY)) leaves no picture of \(codedWidth)×\(codedHeight)")
        }
        width = codedWidth - cropX
        height = codedHeight - cropY
        guard width <= maxWidth, height <= maxHeight else {
            throw BitstreamError.unsupported("picture \(width)×\(height) exceeds the cap \(maxWidth)×\(maxHeight)")
        }

        vuiParametersPresentFlag = try r.flag()
        if vuiParametersPresentFlag { try parseVUI(&r) }
        // rbsp_trailing_bits and any SPS extension data are not needed.
    }

    /// Parses and discards scaling_list(…, sizeOfScalingList, …) (ITU-T H.264 §7.3.2.1.1.1).
    private static func skipScalingList(_ r: inout BitReader, size: Int) throws {
        var lastScale = 8
        var nextScale = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let deltaScale = Int(try r.se())
                guard (-128...127).contains(deltaScale) else {
                    throw BitstreamError.invalid("delta_scale = \(deltaScale) outside -128...127")
                }
                nextScale = (lastScale + deltaScale + 256) % 256
            }
            lastScale = nextScale == 0 ? lastScale : nextScale
        }
    }

    /// Parses vui_parameters() (ITU-T H.264 §E.1.1).
    private mutating func parseVUI(_ r: inout BitReader) throws {
        let prefix = try VUIPrefix(&r)   // aspect ratio … chroma location, shared with the other codec
        sar = prefix.sar
        videoFormat = prefix.videoFormat
        videoFullRangeFlag = prefix.videoFullRangeFlag
        colourPrimaries = prefix.colourPrimaries
        transferCharacteristics = prefix.transferCharacteristics
        matrixCoefficients = prefix.matrixCoefficients
        if try r.flag() { // timing_info_present_flag
            numUnitsInTick = try r.bits(32)
            timeScale = try r.bits(32)
            fixedFrameRateFlag = try r.flag()
        }
        nalHrdParametersPresentFlag = try r.flag()
        if nalHrdParametersPresentFlag { try Self.skipHRDParameters(&r) }
        vclHrdParametersPresentFlag = try r.flag()
        if vclHrdParametersPresentFlag { try Self.skipHRDParameters(&r) }
        if nalHrdParametersPresentFlag || vclHrdParametersPresentFlag {
            lowDelayHrdFlag = try r.flag()
        }
        picStructPresentFlag = try r.flag()
        bitstreamRestrictionFlag = try r.flag()
        if bitstreamRestrictionFlag {
            _ = try r.flag() // motion_vectors_over_pic_boundaries_flag
            _ = try r.ue(max: 16, "max_bytes_per_pic_denom")
            _ = try r.ue(max: 16, "max_bits_per_mb_denom")
            _ = try r.ue(max: 16, "log2_max_mv_length_horizontal") // 0...15 in current editions, 16 in older ones
            _ = try r.ue(max: 16, "log2_max_mv_length_vertical")
            let reorder = Int(try r.ue(max: 16, "max_num_reorder_frames"))
            let dec = Int(try r.ue(max: 16, "max_dec_frame_buffering"))
            maxNumReorderFrames = reorder
            maxDecFrameBuffering = dec
        }
    }

    /// Parses and discards hrd_parameters() (ITU-T H.264 §E.1.2).
    private static func skipHRDParameters(_ r: inout BitReader) throws {
        let cpbCntMinus1 = Int(try r.ue(max: 31, "cpb_cnt_minus1"))
        try r.skip(8) // bit_rate_scale u(4), cpb_size_scale u(4)
        for _ in 0...cpbCntMinus1 {
            _ = try r.ue() // bit_rate_value_minus1
            _ = try r.ue() // cpb_size_value_minus1
            _ = try r.flag() // cbr_flag
        }
        // initial_cpb_removal_delay_length_minus1, cpb_removal_delay_length_minus1,
        // dpb_output_delay_length_minus1, time_offset_length: u(5) each.
        try r.skip(20)
    }
}

// MARK: - PPS

/// An H.264 picture parameter set (`pic_parameter_set_rbsp`, ITU-T H.264 §7.3.2.2), parsed through redundant_pic_cnt_present_flag.
public struct H264PPS: Sendable, Hashable {
    /// pic_parameter_set_id, 0...255 (ITU-T H.264 §7.4.2.2).
    public private(set) var picParameterSetId: Int = 0
    /// seq_parameter_set_id of the SPS this PPS refers to, 0...31 (ITU-T H.264 §7.4.2.2).
    public private(set) var seqParameterSetId: Int = 0
    /// entropy_coding_mode_flag: true for CABAC, false for CAVLC (ITU-T H.264 §7.4.2.2).
    public private(set) var entropyCodingModeFlag: Bool = false
    /// bottom_field_pic_order_in_frame_present_flag: slice headers carry delta_pic_order_cnt_bottom / delta_pic_order_cnt[1] (ITU-T H.264 §7.4.2.2).
    public private(set) var bottomFieldPicOrderInFramePresentFlag: Bool = false
    /// num_slice_groups_minus1, 0...7; nonzero means FMO (ITU-T H.264 §7.4.2.2).
    public private(set) var numSliceGroupsMinus1: Int = 0
    /// slice_group_map_type, 0...6; nil when numSliceGroupsMinus1 == 0 (ITU-T H.264 §7.4.2.2).
    public private(set) var sliceGroupMapType: Int? = nil
    /// slice_group_change_rate_minus1, in map units; nil unless sliceGroupMapType is 3, 4 or 5 (ITU-T H.264 §7.4.2.2).
    public private(set) var sliceGroupChangeRateMinus1: Int? = nil
    /// num_ref_idx_l0_default_active_minus1, 0...31 (ITU-T H.264 §7.4.2.2).
    public private(set) var numRefIdxL0DefaultActiveMinus1: Int = 0
    /// num_ref_idx_l1_default_active_minus1, 0...31 (ITU-T H.264 §7.4.2.2).
    public private(set) var numRefIdxL1DefaultActiveMinus1: Int = 0
    /// weighted_pred_flag: explicit weighted prediction in P/SP slices (ITU-T H.264 §7.4.2.2).
    public private(set) var weightedPredFlag: Bool = false
    /// weighted_bipred_idc, 0...2 (ITU-T H.264 §7.4.2.2).
    public private(set) var weightedBipredIdc: Int = 0
    /// pic_init_qp_minus26, in QP units (ITU-T H.264 §7.4.2.2).
    public private(set) var picInitQpMinus26: Int = 0
    /// pic_init_qs_minus26, in QP units, −26...25 (ITU-T H.264 §7.4.2.2).
    public private(set) var picInitQsMinus26: Int = 0
    /// chroma_qp_index_offset, in QP units, −12...12 (ITU-T H.264 §7.4.2.2).
    public private(set) var chromaQpIndexOffset: Int = 0
    /// deblocking_filter_control_present_flag (ITU-T H.264 §7.4.2.2).
    public private(set) var deblockingFilterControlPresentFlag: Bool = false
    /// constrained_intra_pred_flag (ITU-T H.264 §7.4.2.2).
    public private(set) var constrainedIntraPredFlag: Bool = false
    /// redundant_pic_cnt_present_flag: slice headers carry redundant_pic_cnt (ITU-T H.264 §7.4.2.2).
    public private(set) var redundantPicCntPresentFlag: Bool = false

    /// Parses a PPS NAL unit (nal_unit_type 8) as sent: escaped, header byte included, no start code (ITU-T H.264 §7.3.2.2).
    /// The slice group (FMO) syntax is parsed and skipped; fields after redundant_pic_cnt_present_flag are not read.
    public init<C: Collection>(nalUnit: C) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH264NALHeader(&r)
        guard header.type == 8 else { throw BitstreamError.invalid("nal_unit_type \(header.type) is not a PPS (8)") }

        picParameterSetId = Int(try r.ue(max: 255, "pic_parameter_set_id"))
        seqParameterSetId = Int(try r.ue(max: 31, "seq_parameter_set_id"))
        entropyCodingModeFlag = try r.flag()
        bottomFieldPicOrderInFramePresentFlag = try r.flag()
        numSliceGroupsMinus1 = Int(try r.ue(max: 7, "num_slice_groups_minus1"))
        if numSliceGroupsMinus1 > 0 {
            let mapType = Int(try r.ue(max: 6, "slice_group_map_type"))
            sliceGroupMapType = mapType
            switch mapType {
            case 0:
                for _ in 0...numSliceGroupsMinus1 { _ = try r.ue() } // run_length_minus1
            case 2:
                for _ in 0..<numSliceGroupsMinus1 {
                    _ = try r.ue() // top_left
                    _ = try r.ue() // bottom_right
                }
            case 3, 4, 5:
                _ = try r.flag() // slice_group_change_direction_flag
                sliceGroupChangeRateMinus1 = Int(try r.ue())
            case 6:
                // PicSizeInMapUnits ≤ MaxFS of the highest level (139264 macroblocks, Table A-1).
                let picSizeInMapUnitsMinus1 = Int(try r.ue(max: 139_263, "pic_size_in_map_units_minus1"))
                let n = numSliceGroupsMinus1 + 1
                let idBits = n <= 1 ? 0 : (Int.bitWidth - (n - 1).leadingZeroBitCount) // Ceil(Log2(n))
                try r.skip((picSizeInMapUnitsMinus1 + 1) * idBits) // slice_group_id[i]
            default:
                break
            }
        }
        numRefIdxL0DefaultActiveMinus1 = Int(try r.ue(max: 31, "num_ref_idx_l0_default_active_minus1"))
        numRefIdxL1DefaultActiveMinus1 = Int(try r.ue(max: 31, "num_ref_idx_l1_default_active_minus1"))
        weightedPredFlag = try r.flag()
        weightedBipredIdc = Int(try r.bits(2))
        guard weightedBipredIdc <= 2 else { throw BitstreamError.invalid("weighted_bipred_idc = 3") }
        // −(26 + QpBdOffsetY) ≥ −(26 + 36) for the largest bit depth (14).
        picInitQpMinus26 = Int(try r.se())
        guard (-62...25).contains(picInitQpMinus26) else {
            throw BitstreamError.invalid("pic_init_qp_minus26 = \(picInitQpMinus26) outside -62...25")
        }
        picInitQsMinus26 = Int(try r.se())
        guard (-26...25).contains(picInitQsMinus26) else {
            throw BitstreamError.invalid("pic_init_qs_minus26 = \(picInitQsMinus26) outside -26...25")
        }
        chromaQpIndexOffset = Int(try r.se())
        guard (-12...12).contains(chromaQpIndexOffset) else {
            throw BitstreamError.invalid("chroma_qp_index_offset = \(chromaQpIndexOffset) outside -12...12")
        }
        deblockingFilterControlPresentFlag = try r.flag()
        constrainedIntraPredFlag = try r.flag()
        redundantPicCntPresentFlag = try r.flag()
    }
}

// MARK: - Slice header start

/// The first fields of an H.264 slice header (`slice_header()`, ITU-T H.264 §7.3.3), through delta_pic_order_cnt[1]:
/// enough to find picture boundaries (§7.4.1.2.4).
public struct H264SliceHeaderStart: Sendable, Hashable {
    /// nal_ref_idc from the NAL unit header, 0...3; 0 means a non-reference picture (ITU-T H.264 §7.4.1).
    public private(set) var nalRefIdc: Int = 0
    /// nal_unit_type from the NAL unit header: 1 non-IDR slice, 2 data partition A, 5 IDR slice (ITU-T H.264 §7.4.1, Table 7-1).
    public private(set) var nalUnitType: Int = 0
    /// first_mb_in_slice, in macroblocks (macroblock pairs for MBAFF) (ITU-T H.264 §7.4.3).
    public private(set) var firstMbInSlice: Int = 0
    /// slice_type, 0...9: P, B, I, SP, SI, and +5 for "all slices of the picture have this type" (ITU-T H.264 §7.4.3, Table 7-6).
    public private(set) var sliceType: Int = 0
    /// pic_parameter_set_id, 0...255 (ITU-T H.264 §7.4.3).
    public private(set) var picParameterSetId: Int = 0
    /// colour_plane_id, 0...2; nil unless the SPS has separate_colour_plane_flag (ITU-T H.264 §7.4.3).
    public private(set) var colourPlaneId: Int? = nil
    /// frame_num, in frame_num units (modulo MaxFrameNum); nil when the PPS or SPS is unknown (ITU-T H.264 §7.4.3).
    public private(set) var frameNum: Int? = nil
    /// field_pic_flag (false when absent, i.e. frame_mbs_only_flag); nil when the PPS or SPS is unknown (ITU-T H.264 §7.4.3).
    public private(set) var fieldPicFlag: Bool? = nil
    /// bottom_field_flag (false when absent); nil when the PPS or SPS is unknown (ITU-T H.264 §7.4.3).
    public private(set) var bottomFieldFlag: Bool? = nil
    /// idr_pic_id, 0...65535; nil for non-IDR slices or when the PPS or SPS is unknown (ITU-T H.264 §7.4.3).
    public private(set) var idrPicId: Int? = nil
    /// pic_order_cnt_lsb, in POC units (modulo MaxPicOrderCntLsb); nil unless pic_order_cnt_type == 0 and the PPS and SPS are known (ITU-T H.264 §7.4.3).
    public private(set) var picOrderCntLsb: Int? = nil
    /// delta_pic_order_cnt_bottom, in POC units; nil when absent (ITU-T H.264 §7.4.3).
    public private(set) var deltaPicOrderCntBottom: Int? = nil
    /// delta_pic_order_cnt[0], in POC units; nil when absent (ITU-T H.264 §7.4.3).
    public private(set) var deltaPicOrderCnt0: Int? = nil
    /// delta_pic_order_cnt[1], in POC units; nil when absent (ITU-T H.264 §7.4.3).
    public private(set) var deltaPicOrderCnt1: Int? = nil

    /// IdrPicFlag: nal_unit_type == 5 (ITU-T H.264 §7.4.1).
    public var idrPicFlag: Bool { nalUnitType == 5 }
    /// True when the referenced PPS and SPS were known, so the fields after pic_parameter_set_id were parsed.
    public var hasParameterSets: Bool { frameNum != nil }

    /// Parses the start of a slice header from a slice NAL unit (nal_unit_type 1, 2 or 5) as sent:
    /// escaped, header byte included, no start code (ITU-T H.264 §7.3.3).
    /// When the PPS or its SPS is not in the dictionaries, only firstMbInSlice, sliceType and
    /// picParameterSetId are parsed and the later fields are nil.
    /// - Parameters:
    ///   - spsByID: known SPSs keyed by seq_parameter_set_id.
    ///   - ppsByID: known PPSs keyed by pic_parameter_set_id.
    public init<C: Collection>(nalUnit: C, spsByID: [Int: H264SPS], ppsByID: [Int: H264PPS]) throws where C.Element == UInt8 {
        var r = BitReader(RBSP.unescape(nalUnit))
        let header = try readH264NALHeader(&r)
        switch header.type {
        case 1, 2, 5: break
        case 20, 21: throw BitstreamError.unsupported("nal_unit_type \(header.type) (extension slice) is not supported")
        default: throw BitstreamError.invalid("nal_unit_type \(header.type) is not a slice")
        }
        nalRefIdc = header.refIdc
        nalUnitType = header.type
        if header.type == 5 && header.refIdc == 0 {
            throw BitstreamError.invalid("IDR slice with nal_ref_idc 0")
        }

        let firstMb = try r.ue()
        sliceType = Int(try r.ue(max: 9, "slice_type"))
        picParameterSetId = Int(try r.ue(max: 255, "pic_parameter_set_id"))
        firstMbInSlice = Int(firstMb)

        guard let pps = ppsByID[picParameterSetId], let sps = spsByID[pps.seqParameterSetId] else { return }

        let picSizeInMbs = sps.picWidthInMbs * sps.frameHeightInMbs
        guard firstMbInSlice < picSizeInMbs else {
            throw BitstreamError.invalid("first_mb_in_slice = \(firstMbInSlice) ≥ PicSizeInMbs \(picSizeInMbs)")
        }
        if sps.separateColourPlaneFlag {
            let id = Int(try r.bits(2))
            guard id <= 2 else { throw BitstreamError.invalid("colour_plane_id = 3") }
            colourPlaneId = id
        }
        let frameNumValue = Int(try r.bits(sps.log2MaxFrameNum))
        var fieldPic = false
        var bottomField = false
        if !sps.frameMbsOnlyFlag {
            fieldPic = try r.flag()
            if fieldPic { bottomField = try r.flag() }
        }
        if nalUnitType == 5 {
            idrPicId = Int(try r.ue(max: 65535, "idr_pic_id"))
        }
        if sps.picOrderCntType == 0, let lsbBits = sps.log2MaxPicOrderCntLsb {
            picOrderCntLsb = Int(try r.bits(lsbBits))
            if pps.bottomFieldPicOrderInFramePresentFlag && !fieldPic {
                deltaPicOrderCntBottom = Int(try r.se())
            }
        }
        if sps.picOrderCntType == 1 && !sps.deltaPicOrderAlwaysZeroFlag {
            deltaPicOrderCnt0 = Int(try r.se())
            if pps.bottomFieldPicOrderInFramePresentFlag && !fieldPic {
                deltaPicOrderCnt1 = Int(try r.se())
            }
        }
        frameNum = frameNumValue
        fieldPicFlag = fieldPic
        bottomFieldFlag = bottomField
    }

    /// Detection of the first VCL NAL unit of a primary coded picture (ITU-T H.264 §7.4.1.2.4): true when
    /// `current` begins a new picture relative to `previous`, the preceding slice of the stream.
    ///
    /// Compares frame_num, pic_parameter_set_id, field_pic_flag, bottom_field_flag, nal_ref_idc (one zero, the
    /// other not), pic_order_cnt_lsb / delta_pic_order_cnt_bottom (POC type 0), delta_pic_order_cnt[0/1]
    /// (POC type 1), IdrPicFlag and idr_pic_id. Fields that are nil in both (unknown parameter sets) compare equal.
    ///
    /// Practical rule beyond the spec: it also returns true whenever `current.firstMbInSlice == 0`. This is right
    /// for every stream without arbitrary slice order (ASO, Baseline only), and catches back-to-back pictures whose
    /// headers are otherwise identical (e.g. repeated IDRs with equal idr_pic_id after a loss). Redundant coded
    /// pictures (redundant_pic_cnt > 0) are not distinguished.
    public static func startsNewPicture(previous: H264SliceHeaderStart, current: H264SliceHeaderStart) -> Bool {
        if current.firstMbInSlice == 0 { return true }
        if previous.frameNum != current.frameNum { return true }
        if previous.picParameterSetId != current.picParameterSetId { return true }
        if previous.fieldPicFlag != current.fieldPicFlag { return true }
        if previous.bottomFieldFlag != current.bottomFieldFlag { return true }
        if (previous.nalRefIdc == 0) != (current.nalRefIdc == 0) { return true }
        if previous.picOrderCntLsb != current.picOrderCntLsb { return true }
        if previous.deltaPicOrderCntBottom != current.deltaPicOrderCntBottom { return true }
        if previous.deltaPicOrderCnt0 != current.deltaPicOrderCnt0 { return true }
        if previous.deltaPicOrderCnt1 != current.deltaPicOrderCnt1 { return true }
        if previous.idrPicFlag != current.idrPicFlag { return true }
        if previous.idrPicFlag && current.idrPicFlag && previous.idrPicId != current.idrPicId { return true }
        return false
    }
}
