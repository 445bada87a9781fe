import SpyglassBitstream

/// Where an access unit's picture comes in output order: pictures of a later `epoch` (a coded
/// video sequence that reset the count: an IDR, a BLA, or the first picture seen) come after
/// every picture of an earlier one; within an epoch, the lower `count` (the picture order count,
/// PicOrderCntVal, in POC units) comes first (ITU-T H.264 §8.2.1, H.265 §8.3.1).
public struct PictureOrder: Comparable, Sendable, Hashable {
    /// Coded video sequences begun since the counter started (0 for the first).
    public var epoch: Int
    /// The picture order count within the epoch, in POC units (two per frame for x264's type 0).
    public var count: Int

    public init(epoch: Int, count: Int) {
        self.epoch = epoch
        self.count = count
    }

    public static func < (a: PictureOrder, b: PictureOrder) -> Bool {
        (a.epoch, a.count) < (b.epoch, b.count)
    }
}

/// Derives each access unit's picture order count in decode order, as a decoder does, from the
/// first slice's header and the parameter sets it refers to:
/// - H.264 `pic_order_cnt_type` 0 from `pic_order_cnt_lsb` and the previous reference
///   picture's PicOrderCntMsb (ITU-T H.264 §8.2.1.1); an IDR starts a new epoch at 0.
///   Types 1 and 2 (§8.2.1.2–3) and memory_management_control_operation 5 are taken as output
///   order = decode order: type 2 cannot reorder, and type 1 is not sent by the encoders we know.
/// - H.265 from `slice_pic_order_cnt_lsb` and the previous TemporalId 0 picture that is not
///   RASL, RADL or a sub-layer non-reference picture (ITU-T H.265 §8.3.1); an IDR, a BLA or the
///   first picture starts a new epoch with PicOrderCntMsb 0.
/// A slice whose header cannot be read (unknown parameter sets, a cut unit) gets the next count
/// after the one before, in decode order.
public struct PictureOrderCounter: Sendable {
    private var epoch = -1
    private var previousMsb = 0
    private var previousLsb = 0
    private var last = PictureOrder(epoch: 0, count: 0)

    public init() {}

    /// The output order of `au`, the next access unit in decode order.
    public mutating func order(of au: AccessUnit, store: ParameterSetStore) -> PictureOrder {
        guard let unit = au.units.first(where: { $0.header?.isVCL == true }), let header = unit.header else { return next() }
        let info = store.sliceInfo(header: header, unit: unit.bytes)
        let order: PictureOrder?
        switch au.codec {
        case .h264: order = info.h264.flatMap { h264($0, store: store) }
        case .h265: order = info.h265.flatMap { h265($0, store: store) }
        }
        guard let order else { return next() }
        last = order
        return order
    }

    /// The pictures a decoder may hold back for reordering before it outputs one: H.264's
    /// `max_num_reorder_frames` (VUI bitstream restriction, §E.2.1), else 0 for the Baseline
    /// and intra-only profiles, else the level's MaxDpbFrames (Table A-1, at most 16);
    /// H.265's `sps_max_num_reorder_pics` of the highest sub-layer (§7.4.3.2.1). 0 when the
    /// access unit's parameter sets are unknown.
    public static func reorderDepth(of au: AccessUnit, store: ParameterSetStore) -> Int {
        guard let unit = au.units.first(where: { $0.header?.isVCL == true }), let header = unit.header else { return 0 }
        let info = store.sliceInfo(header: header, unit: unit.bytes)
        if let s = info.h265, let pps = store.h265PPS[s.slicePicParameterSetId], let sps = store.h265SPS[pps.ppsSeqParameterSetId] {
            return min(sps.spsMaxNumReorderPics, 16)
        }
        guard let s = info.h264, let pps = store.h264PPS[s.picParameterSetId], let sps = store.h264SPS[pps.seqParameterSetId] else { return 0 }
        if let n = sps.maxNumReorderFrames { return min(n, 16) }
        let intraOnly = [100, 110, 122, 244].contains(sps.profileIdc) && sps.constraintFlags & 0x10 != 0
        if sps.profileIdc == 66 || sps.profileIdc == 44 || intraOnly { return 0 }
        return min(maxDpbMbs(level: sps.levelIdc) / max(1, sps.picWidthInMbs * sps.frameHeightInMbs), 16)
    }

    /// MaxDpbMbs for `level_idc` (ITU-T H.264 Table A-1; 9 and 11 are level 1b).
    static func maxDpbMbs(level: Int) -> Int {
        switch level {
        case ...11: return level == 11 ? 900 : 396
        case 12, 13, 20: return 2376
        case 21: return 4752
        case 22, 30: return 8100
        case 31: return 18_000
        case 32: return 20_480
        case 40, 41: return 32_768
        case 42: return 34_816
        case 50: return 110_400
        case 51, 52: return 184_320
        default: return 696_320
        }
    }

    private mutating func next() -> PictureOrder {
        if epoch < 0 { epoch = 0 }
        last = PictureOrder(epoch: last.epoch, count: last.count + 2)
        return last
    }

    private mutating func h264(_ s: H264SliceHeaderStart, store: ParameterSetStore) -> PictureOrder? {
        guard let pps = store.h264PPS[s.picParameterSetId], let sps = store.h264SPS[pps.seqParameterSetId] else { return nil }
        if s.idrPicFlag || epoch < 0 { epoch += 1; previousMsb = 0; previousLsb = 0 }
        guard sps.picOrderCntType == 0, let lsb = s.picOrderCntLsb, let bits = sps.log2MaxPicOrderCntLsb else {
            return s.idrPicFlag ? PictureOrder(epoch: epoch, count: 0) : PictureOrder(epoch: epoch, count: (last.epoch == epoch ? last.count : 0) + 2)
        }
        let msb = Self.msb(lsb: lsb, previousLsb: previousLsb, previousMsb: previousMsb, maxLsb: 1 << bits)
        let top = msb + lsb
        let count = s.fieldPicFlag == true ? top : min(top, top + (s.deltaPicOrderCntBottom ?? 0))
        if s.nalRefIdc != 0 { previousMsb = msb; previousLsb = lsb }
        return PictureOrder(epoch: epoch, count: count)
    }

    private mutating func h265(_ s: H265SliceSegmentHeaderStart, store: ParameterSetStore) -> PictureOrder? {
        let resets = s.isIDR || (16...18).contains(s.nalUnitType) || (s.isIRAP && epoch < 0)
        var lsb = 0, msb = 0
        if s.isIDR {
            epoch += 1
        } else {
            guard let l = s.slicePicOrderCntLsb, let pps = store.h265PPS[s.slicePicParameterSetId],
                  let sps = store.h265SPS[pps.ppsSeqParameterSetId] else { return nil }
            lsb = l
            if resets || epoch < 0 { epoch += 1 } else {
                msb = Self.msb(lsb: lsb, previousLsb: previousLsb, previousMsb: previousMsb, maxLsb: 1 << sps.log2MaxPicOrderCntLsb)
            }
        }
        // prevTid0Pic: TemporalId 0 and not RASL/RADL (6...9) nor a sub-layer non-reference picture (even types below 16).
        let subLayerNonReference = s.nalUnitType < 16 && s.nalUnitType % 2 == 0
        if s.temporalIdPlus1 == 1 && !(6...9).contains(s.nalUnitType) && !subLayerNonReference {
            previousMsb = msb
            previousLsb = lsb
        }
        return PictureOrder(epoch: epoch, count: msb + lsb)
    }

    /// PicOrderCntMsb from the wrap of the lsb against the previous picture's (ITU-T H.264
    /// (8-3), H.265 (8-1)).
    static func msb(lsb: Int, previousLsb: Int, previousMsb: Int, maxLsb: Int) -> Int {
        if lsb < previousLsb && previousLsb - lsb >= maxLsb / 2 { return previousMsb + maxLsb }
        if lsb > previousLsb && lsb - previousLsb > maxLsb / 2 { return previousMsb - maxLsb }
        return previousMsb
    }
}
