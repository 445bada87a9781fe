/// A parsed NAL unit header.
///
/// H.264: one byte, `forbidden_zero_bit | nal_ref_idc(2) | nal_unit_type(5)` (ITU-T H.264 §7.3.1).
/// H.265: two bytes, `forbidden_zero_bit | nal_unit_type(6) | nuh_layer_id(6) | nuh_temporal_id_plus1(3)`
/// (ITU-T H.265 §7.3.1.2).
public struct NALUnitHeader: Equatable, Sendable {
    public let codec: VideoCodec
    /// `nal_unit_type`: 0...31 for H.264, 0...63 for H.265.
    public let type: UInt8
    /// H.264 `nal_ref_idc` (0...3); 0 for H.265.
    public let nalRefIdc: UInt8
    /// H.265 `nuh_layer_id`; 0 for H.264.
    public let layerId: UInt8
    /// H.265 `nuh_temporal_id_plus1` (1...7); 1 for H.264.
    public let temporalIdPlus1: UInt8

    /// Header size in bytes: 1 (H.264) or 2 (H.265).
    public var size: Int { codec == .h264 ? 1 : 2 }

    /// Parses the header at the start of `bytes`.
    /// - Returns: nil when the unit is too short or `forbidden_zero_bit` is set
    ///   (and for H.265 when `nuh_temporal_id_plus1` is 0, which §7.4.2.2 forbids).
    public init?<C: Collection>(codec: VideoCodec, bytes: C) where C.Element == UInt8 {
        var it = bytes.makeIterator()
        guard let b0 = it.next(), b0 & 0x80 == 0 else { return nil }
        self.codec = codec
        switch codec {
        case .h264:
            type = b0 & 0x1F
            nalRefIdc = (b0 >> 5) & 0x3
            layerId = 0
            temporalIdPlus1 = 1
        case .h265:
            guard let b1 = it.next(), b1 & 0x7 != 0 else { return nil }
            type = (b0 >> 1) & 0x3F
            nalRefIdc = 0
            layerId = ((b0 & 1) << 5) | (b1 >> 3)
            temporalIdPlus1 = b1 & 0x7
        }
    }

    /// True for a VCL NAL unit (coded slice data).
    /// H.264 Table 7-1: types 1...5 (type 20 slice extensions are not decoded by Spyglass).
    /// H.265 Table 7-1: types 0...31.
    public var isVCL: Bool {
        switch codec {
        case .h264: return (1...5).contains(type)
        case .h265: return type <= 31
        }
    }

    /// True for an IDR picture (H.264 type 5) or an IRAP picture (H.265 types 16...23: BLA, IDR, CRA).
    public var isRandomAccessPoint: Bool {
        switch codec {
        case .h264: return type == 5
        case .h265: return (16...23).contains(type)
        }
    }

    /// True for a random-access point where decoding can start and show exactly what decoding
    /// from an earlier one shows: an IDR (H.264 type 5; H.265 19, 20) or a BLA (H.265 16–18, whose
    /// RASL pictures are never output). Not a CRA (H.265 21): a decoder that starts there drops
    /// its RASL pictures, which continuous decoding shows (ITU-T H.265 §8.1.3, NoRaslOutputFlag).
    public var isClosedRandomAccessPoint: Bool {
        switch codec {
        case .h264: return type == 5
        case .h265: return (16...20).contains(type)
        }
    }

    /// True for VPS (H.265 32), SPS (H.264 7, H.265 33) and PPS (H.264 8, H.265 34).
    public var isParameterSet: Bool {
        switch codec {
        case .h264: return type == 7 || type == 8
        case .h265: return (32...34).contains(type)
        }
    }

    /// Kinds of NAL unit that matter for access-unit assembly.
    public enum Kind: Equatable, Sendable {
        case slice, vps, sps, pps, accessUnitDelimiter, sei, suffixSEI
        case endOfSequence, endOfBitstream, fillerData, other
    }

    /// The role of this unit (Table 7-1 of each standard).
    public var kind: Kind {
        switch codec {
        case .h264:
            switch type {
            case 1...5: return .slice
            case 6: return .sei
            case 7: return .sps
            case 8: return .pps
            case 9: return .accessUnitDelimiter
            case 10: return .endOfSequence
            case 11: return .endOfBitstream
            case 12: return .fillerData
            default: return .other
            }
        case .h265:
            switch type {
            case 0...31: return .slice
            case 32: return .vps
            case 33: return .sps
            case 34: return .pps
            case 35: return .accessUnitDelimiter
            case 36: return .endOfSequence
            case 37: return .endOfBitstream
            case 38: return .fillerData
            case 39: return .sei
            case 40: return .suffixSEI
            default: return .other
            }
        }
    }

    /// True when this non-VCL unit, arriving after a picture's VCL units, starts the next access unit.
    /// H.264 §7.4.1.2.3: AUD, SPS, PPS, SEI, types 14...18.
    /// H.265 §7.4.2.4.4: AUD, VPS, SPS, PPS, prefix SEI, types 41...44 and 48...55.
    public var startsAccessUnitWhenAfterVCL: Bool {
        switch codec {
        case .h264: return [6, 7, 8, 9].contains(type) || (14...18).contains(type)
        case .h265: return (32...35).contains(type) || type == 39 || (41...44).contains(type) || (48...55).contains(type)
        }
    }
}
