// Tests for H264ParameterSets.swift and H265ParameterSets.swift.
//
// The NAL units below were cut from real streams made by ffmpeg (libx264 / libx265, the command is above
// each group), split at 00 00 01 start codes, escaped as sent, header included. Slices keep only their
// first 24 bytes: enough for the slice header start. Hand-built NAL units (BitWriter below) cover syntax
// that x264/x265 do not emit: SPS scaling lists, POC type 1, FMO, inter-predicted short-term RPSs in the
// SPS, long-term pictures, sub-layer HRD, tiles, dependent slice segments.
// Nothing here runs ffmpeg.
import Testing
@testable import SpyglassBitstream
import TestSupport

// MARK: - Real NAL units

private enum Fixture {
    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1280x720:rate=30 -frames:v 5 -c:v libx264 -f h264 x264_720p30.h264
    static let x264p720SPS: [UInt8] = [
        0x67, 0x64, 0x00, 0x1F, 0xAC, 0xD9, 0x40, 0x50, 0x05, 0xBB, 0x01, 0x10, 0x00, 0x00, 0x03, 0x00,
        0x10, 0x00, 0x00, 0x03, 0x03, 0xC0, 0xF1, 0x83, 0x19, 0x60,
    ]
    static let x264p720PPS: [UInt8] = [
        0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0,
    ]
    // first 24 bytes of a 22042-byte slice, nal_unit_type 5
    static let x264p720Slice0: [UInt8] = [
        0x65, 0x88, 0x84, 0x00, 0x77, 0xD2, 0xAC, 0xFD, 0xD0, 0x9B, 0xD9, 0xD0, 0xBF, 0x80, 0x53, 0x0A,
        0xE2, 0xA3, 0x99, 0x7D, 0x6A, 0xA3, 0x07, 0x2A,
    ]
    // first 24 bytes of a 13329-byte slice, nal_unit_type 1
    static let x264p720Slice1: [UInt8] = [
        0x41, 0x9A, 0x21, 0x6C, 0x47, 0x7F, 0xC8, 0x1B, 0xF5, 0xC3, 0xA1, 0xFD, 0x02, 0x82, 0x0B, 0xC0,
        0x14, 0x3E, 0x75, 0xB0, 0x6A, 0xDF, 0xA9, 0x74,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1918x1078:rate=25 -frames:v 5 -c:v libx264 -f h264 x264_odd25.h264
    static let x264Odd25SPS: [UInt8] = [
        0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40, 0x78, 0x02, 0x27, 0xA9, 0xB0, 0x11, 0x00, 0x00, 0x03,
        0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x32, 0x0F, 0x18, 0x31, 0x96,
    ]
    static let x264Odd25PPS: [UInt8] = [
        0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=640x360:rate=30 -frames:v 5 -pix_fmt yuv422p10le -c:v libx264 -f h264 x264_422_10.h264
    static let x264High422SPS: [UInt8] = [
        0x67, 0x7A, 0x00, 0x1E, 0xB6, 0xCD, 0x94, 0x0A, 0x02, 0xFF, 0x89, 0xC0, 0x44, 0x00, 0x00, 0x03,
        0x00, 0x04, 0x00, 0x00, 0x03, 0x00, 0xF0, 0x3C, 0x58, 0xB6, 0x58,
    ]
    static let x264High422PPS: [UInt8] = [
        0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1920x1080:rate=25 -frames:v 5 -c:v libx264 -flags +ildct+ilme -x264-params interlaced=1 -f h264 x264_interlaced.h264
    static let x264InterlacedSPS: [UInt8] = [
        0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40, 0x78, 0x04, 0x4F, 0xDE, 0x02, 0x20, 0x00, 0x00, 0x03,
        0x00, 0x20, 0x00, 0x00, 0x06, 0x43, 0xE2, 0xC5, 0xB2, 0xC0,
    ]
    static let x264InterlacedPPS: [UInt8] = [
        0x68, 0xFB, 0xA3, 0xCB, 0x22, 0xC0,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=640x368:rate=30 -frames:v 5 -c:v libx264 -x264-params slices=4 -f h264 x264_slices.h264
    static let x264SlicesSPS: [UInt8] = [
        0x67, 0x64, 0x00, 0x1E, 0xAC, 0xD9, 0x40, 0xA0, 0x2F, 0xB0, 0x11, 0x00, 0x00, 0x03, 0x00, 0x01,
        0x00, 0x00, 0x03, 0x00, 0x3C, 0x0F, 0x16, 0x2D, 0x96,
    ]
    static let x264SlicesPPS: [UInt8] = [
        0x68, 0xEB, 0xE3, 0xCB, 0x22, 0xC0,
    ]
    // first 24 bytes of a 2545-byte slice, nal_unit_type 5
    static let x264SlicesSlice0: [UInt8] = [
        0x65, 0x88, 0x84, 0x00, 0x77, 0xD2, 0xAC, 0xFD, 0xD0, 0x9B, 0xD9, 0xD0, 0xBF, 0x80, 0x53, 0x0A,
        0xE2, 0xA3, 0x99, 0x7D, 0x6A, 0xA3, 0x07, 0x2A,
    ]
    // first 24 bytes of a 1633-byte slice, nal_unit_type 5
    static let x264SlicesSlice1: [UInt8] = [
        0x65, 0x01, 0xE2, 0x22, 0x10, 0x00, 0xCF, 0xFE, 0xDF, 0x32, 0xF8, 0x14, 0xCD, 0xC5, 0x89, 0xCE,
        0xCC, 0x80, 0x5C, 0x9E, 0x94, 0xC2, 0x5C, 0x76,
    ]
    // first 24 bytes of a 2137-byte slice, nal_unit_type 5
    static let x264SlicesSlice2: [UInt8] = [
        0x65, 0x00, 0xF0, 0x88, 0x84, 0x00, 0x33, 0xFF, 0xFE, 0xDF, 0x32, 0xF8, 0x14, 0xCD, 0xC5, 0x89,
        0xCE, 0xCC, 0x80, 0x5C, 0x9E, 0x94, 0xC2, 0x5C,
    ]
    // first 24 bytes of a 1972-byte slice, nal_unit_type 5
    static let x264SlicesSlice3: [UInt8] = [
        0x65, 0x00, 0x55, 0x22, 0x21, 0x00, 0x0C, 0xFF, 0xFE, 0xDF, 0x32, 0xF8, 0x14, 0xCD, 0xC5, 0x89,
        0xCE, 0xCC, 0x80, 0x5C, 0x9E, 0x94, 0xC2, 0x5C,
    ]
    // first 24 bytes of a 1076-byte slice, nal_unit_type 1
    static let x264SlicesSlice4: [UInt8] = [
        0x41, 0x9A, 0x24, 0x6C, 0x42, 0xDF, 0xD5, 0x38, 0x88, 0xFF, 0xB2, 0x4F, 0x39, 0x8E, 0x37, 0xD6,
        0xF6, 0x7B, 0x0B, 0xFE, 0xB4, 0xB1, 0x40, 0x80,
    ]
    // first 24 bytes of a 289-byte slice, nal_unit_type 1
    static let x264SlicesSlice5: [UInt8] = [
        0x41, 0x01, 0xE2, 0x68, 0x91, 0xB1, 0x09, 0xFF, 0xFD, 0xF3, 0x2D, 0x4F, 0xCE, 0xB3, 0x71, 0x30,
        0x00, 0x9D, 0xBB, 0x8D, 0xC2, 0xFB, 0x6D, 0x7C,
    ]
    // first 24 bytes of a 1126-byte slice, nal_unit_type 1
    static let x264SlicesSlice6: [UInt8] = [
        0x41, 0x00, 0xF0, 0x9A, 0x24, 0x6C, 0x42, 0x7F, 0xFD, 0xF1, 0x02, 0x1F, 0x98, 0xDC, 0x20, 0x02,
        0x1B, 0xA8, 0x18, 0x05, 0xC6, 0x85, 0x40, 0x5C,
    ]
    // first 24 bytes of a 1131-byte slice, nal_unit_type 1
    static let x264SlicesSlice7: [UInt8] = [
        0x41, 0x00, 0x55, 0x26, 0x89, 0x1B, 0x10, 0x9F, 0xFE, 0x1B, 0xD5, 0x5F, 0x90, 0x78, 0x21, 0xA6,
        0x00, 0x2E, 0x8B, 0x79, 0x4A, 0xD4, 0x0C, 0x2E,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1280x720:rate=30 -frames:v 5 -c:v libx265 -x265-params log-level=error -f hevc x265_720p30.hevc
    static let x265p720VPS: [UInt8] = [
        0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
        0x00, 0x00, 0x03, 0x00, 0x5D, 0x95, 0x98, 0x09,
    ]
    static let x265p720SPS: [UInt8] = [
        0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
        0x00, 0x5D, 0xA0, 0x02, 0x80, 0x80, 0x2D, 0x16, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC0, 0x5A, 0x02,
        0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x3C, 0x10,
    ]
    static let x265p720PPS: [UInt8] = [
        0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40,
    ]
    // first 24 bytes of a 20387-byte slice, nal_unit_type 20
    static let x265p720Slice0: [UInt8] = [
        0x28, 0x01, 0xAF, 0x08, 0x46, 0x0D, 0x32, 0xA8, 0xE5, 0x09, 0x22, 0x31, 0x71, 0x45, 0x0C, 0x4C,
        0x02, 0x13, 0xAB, 0xA0, 0x24, 0x1A, 0x40, 0x33,
    ]
    // first 24 bytes of a 12798-byte slice, nal_unit_type 1
    static let x265p720Slice1: [UInt8] = [
        0x02, 0x01, 0xD0, 0x19, 0x5F, 0x84, 0x31, 0x84, 0x03, 0x06, 0x17, 0x2A, 0xA2, 0x0C, 0xA8, 0x61,
        0x06, 0x00, 0x4A, 0x00, 0x96, 0xA7, 0xEB, 0x8D,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1918x1078:rate=25 -frames:v 5 -pix_fmt yuv420p10le -c:v libx265 -x265-params log-level=error -f hevc x265_odd10.hevc
    static let x265Odd10VPS: [UInt8] = [
        0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x02, 0x20, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
        0x00, 0x00, 0x03, 0x00, 0x78, 0x95, 0x98, 0x09,
    ]
    static let x265Odd10SPS: [UInt8] = [
        0x42, 0x01, 0x01, 0x02, 0x20, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
        0x00, 0x78, 0xA0, 0x03, 0xC0, 0x80, 0x10, 0xE7, 0x54, 0xD9, 0x65, 0x66, 0x92, 0x4C, 0xAF, 0x01,
        0x68, 0x08, 0x00, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x03, 0x00, 0xC8, 0x40,
    ]
    static let x265Odd10PPS: [UInt8] = [
        0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=640x360:rate=30 -frames:v 5 -pix_fmt yuv422p -c:v libx265 -x265-params log-level=error -f hevc x265_422.hevc
    static let x265Main422VPS: [UInt8] = [
        0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x04, 0x08, 0x00, 0x00, 0x03, 0x00, 0x9D, 0x08, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x3F, 0x95, 0x98, 0x09,
    ]
    static let x265Main422SPS: [UInt8] = [
        0x42, 0x01, 0x01, 0x04, 0x08, 0x00, 0x00, 0x03, 0x00, 0x9D, 0x08, 0x00, 0x00, 0x03, 0x00, 0x00,
        0x3F, 0xB0, 0x05, 0x02, 0x01, 0x69, 0x65, 0x95, 0x9A, 0x49, 0x32, 0xBC, 0x05, 0xA0, 0x20, 0x00,
        0x00, 0x03, 0x00, 0x20, 0x00, 0x00, 0x03, 0x03, 0xC1,
    ]
    static let x265Main422PPS: [UInt8] = [
        0x44, 0x01, 0xC1, 0x72, 0xB4, 0x62, 0x40,
    ]

    // ffmpeg -y -loglevel error -f lavfi -i testsrc2=size=1280x720:rate=30 -frames:v 5 -c:v libx265 -x265-params log-level=error:slices=4 -f hevc x265_slices.hevc
    static let x265SlicesVPS: [UInt8] = [
        0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03,
        0x00, 0x00, 0x03, 0x00, 0x5D, 0x95, 0x98, 0x09,
    ]
    static let x265SlicesSPS: [UInt8] = [
        0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03,
        0x00, 0x5D, 0xA0, 0x02, 0x80, 0x80, 0x2D, 0x16, 0x59, 0x59, 0xA4, 0x93, 0x2B, 0xC0, 0x5A, 0x02,
        0x00, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x03, 0x00, 0x3C, 0x10,
    ]
    static let x265SlicesPPS: [UInt8] = [
        0x44, 0x01, 0xC1, 0x72, 0xB4, 0x42, 0x40,
    ]
    // first 24 bytes of a 3718-byte slice, nal_unit_type 20
    static let x265SlicesSlice0: [UInt8] = [
        0x28, 0x01, 0xAF, 0x08, 0x31, 0x79, 0x55, 0xCA, 0x40, 0x63, 0xF0, 0x05, 0x96, 0xBA, 0x93, 0x00,
        0x7B, 0x41, 0xF2, 0x19, 0x68, 0x70, 0xA9, 0xAD,
    ]
    // first 24 bytes of a 2465-byte slice, nal_unit_type 20
    static let x265SlicesSlice1: [UInt8] = [
        0x28, 0x01, 0x27, 0x8F, 0x08, 0x31, 0x5D, 0x45, 0x4B, 0xF9, 0xEE, 0xAD, 0x5F, 0xFD, 0xDF, 0xD7,
        0xF7, 0xF4, 0x52, 0xE6, 0x72, 0xBF, 0x9F, 0xCA,
    ]
    // first 24 bytes of a 10301-byte slice, nal_unit_type 20
    static let x265SlicesSlice2: [UInt8] = [
        0x28, 0x01, 0x2F, 0x0F, 0x08, 0x31, 0xA0, 0xA9, 0x9C, 0x2C, 0xF9, 0xEE, 0xC3, 0x3F, 0xFE, 0x1A,
        0x47, 0xF8, 0x99, 0x52, 0xEA, 0xA8, 0xBF, 0x9F,
    ]
    // first 24 bytes of a 4386-byte slice, nal_unit_type 20
    static let x265SlicesSlice3: [UInt8] = [
        0x28, 0x01, 0x36, 0x8F, 0x08, 0x31, 0xB0, 0xD3, 0x01, 0x74, 0xF9, 0xEE, 0xAD, 0x5F, 0xFD, 0xDF,
        0xD7, 0xF7, 0xF4, 0x52, 0xE6, 0x72, 0xBF, 0x9F,
    ]
    // first 24 bytes of a 2510-byte slice, nal_unit_type 1
    static let x265SlicesSlice4: [UInt8] = [
        0x02, 0x01, 0xD0, 0x19, 0x5F, 0x84, 0x31, 0x84, 0x18, 0xB5, 0xCB, 0x51, 0x20, 0x42, 0xAF, 0xF2,
        0x88, 0x65, 0xC6, 0x79, 0x04, 0xBC, 0x52, 0xAE,
    ]
}

private func h264SlicesHeaders(_ nals: [[UInt8]], _ sps: H264SPS, _ pps: H264PPS) throws -> [H264SliceHeaderStart] {
    try nals.map { try H264SliceHeaderStart(nalUnit: $0, spsByID: [sps.seqParameterSetId: sps], ppsByID: [pps.picParameterSetId: pps]) }
}

private func h265SliceHeaders(_ nals: [[UInt8]], _ sps: H265SPS, _ pps: H265PPS) throws -> [H265SliceSegmentHeaderStart] {
    try nals.map {
        try H265SliceSegmentHeaderStart(nalUnit: $0, spsByID: [sps.seqParameterSetId: sps], ppsByID: [pps.ppsPicParameterSetId: pps])
    }
}

@Suite struct H264ParameterSetParsingTests {
    @Test func x264At30fpsWithEscapedTimingInfo() throws {
        // num_units_in_tick = 1, time_scale = 60: the VUI bytes 00 00 00 01 00 00 00 3C are escaped.
        let raw = Fixture.x264p720SPS
        #expect((0..<(raw.count - 2)).contains { raw[$0] == 0 && raw[$0 + 1] == 0 && raw[$0 + 2] == 3 })
        let sps = try H264SPS(nalUnit: raw)
        #expect(sps.profileIdc == 100 && sps.levelIdc == 31)
        #expect(sps.width == 1280 && sps.height == 720)
        #expect(sps.codedWidth == 1280 && sps.codedHeight == 720)
        #expect(sps.chromaFormatIdc == 1 && sps.bitDepthLuma == 8 && sps.bitDepthChroma == 8)
        #expect(sps.numUnitsInTick == 1 && sps.timeScale == 60)
        #expect(sps.frameRate == 30.0)
        #expect(sps.frameMbsOnlyFlag && sps.picOrderCntType == 0)
        #expect(sps.bitstreamRestrictionFlag && sps.maxNumReorderFrames != nil && sps.maxDecFrameBuffering != nil)
        #expect(sps.sampleAspectRatio?.num == 1 && sps.sampleAspectRatio?.den == 1)

        let pps = try H264PPS(nalUnit: Fixture.x264p720PPS)
        #expect(pps.seqParameterSetId == sps.seqParameterSetId)
        #expect(pps.entropyCodingModeFlag)
        #expect(pps.numSliceGroupsMinus1 == 0)

        let slices = try h264SlicesHeaders([Fixture.x264p720Slice0, Fixture.x264p720Slice1], sps, pps)
        #expect(slices[0].firstMbInSlice == 0 && slices[0].nalUnitType == 5 && slices[0].idrPicFlag)
        #expect(slices[0].idrPicId != nil && slices[0].frameNum == 0 && slices[0].picOrderCntLsb == 0)
        #expect(slices[0].sliceType % 5 == 2) // I
        #expect(slices[1].nalUnitType == 1 && slices[1].idrPicId == nil && slices[1].frameNum == 1)
        #expect(H264SliceHeaderStart.startsNewPicture(previous: slices[0], current: slices[1]))
    }

    @Test func oddSizeCroppingAt25fps() throws {
        let sps = try H264SPS(nalUnit: Fixture.x264Odd25SPS)
        #expect(sps.codedWidth == 1920 && sps.codedHeight == 1088)
        #expect(sps.frameCroppingFlag)
        #expect(sps.width == 1918 && sps.height == 1078)
        #expect(sps.frameRate == 25.0)
        #expect((try? H264PPS(nalUnit: Fixture.x264Odd25PPS)) != nil)
    }

    @Test func high422TenBit() throws {
        let sps = try H264SPS(nalUnit: Fixture.x264High422SPS)
        #expect(sps.profileIdc == 122)
        #expect(sps.chromaFormatIdc == 2 && sps.bitDepthLuma == 10 && sps.bitDepthChroma == 10)
        #expect(sps.width == 640 && sps.height == 360)
        #expect(sps.frameRate == 30.0)
    }

    @Test func interlacedMBAFF() throws {
        let sps = try H264SPS(nalUnit: Fixture.x264InterlacedSPS)
        #expect(!sps.frameMbsOnlyFlag && sps.mbAdaptiveFrameFieldFlag)
        #expect(sps.frameHeightInMbs == 68 && sps.codedHeight == 1088)
        #expect(sps.width == 1920 && sps.height == 1080) // CropUnitY = 2 · 2
        #expect(sps.frameRate == 25.0)
    }

    @Test func fourSlicesPerPicture() throws {
        let sps = try H264SPS(nalUnit: Fixture.x264SlicesSPS)
        let pps = try H264PPS(nalUnit: Fixture.x264SlicesPPS)
        #expect(sps.width == 640 && sps.height == 368)
        let slices = try h264SlicesHeaders([
            Fixture.x264SlicesSlice0, Fixture.x264SlicesSlice1, Fixture.x264SlicesSlice2, Fixture.x264SlicesSlice3,
            Fixture.x264SlicesSlice4, Fixture.x264SlicesSlice5, Fixture.x264SlicesSlice6, Fixture.x264SlicesSlice7,
        ], sps, pps)
        #expect(slices[0].firstMbInSlice == 0 && slices[4].firstMbInSlice == 0)
        for i in 1..<slices.count {
            let isNew = H264SliceHeaderStart.startsNewPicture(previous: slices[i - 1], current: slices[i])
            #expect(isNew == (i == 4), "slice \(i)")
            if !isNew { #expect(slices[i].firstMbInSlice > slices[i - 1].firstMbInSlice) }
        }
        // Without the first_mb_in_slice == 0 shortcut the spec comparisons alone find the boundary.
        #expect(slices[5].firstMbInSlice != 0)
        #expect(H264SliceHeaderStart.startsNewPicture(previous: slices[3], current: slices[5]))
    }

    @Test func unknownParameterSetsLeaveFieldsNil() throws {
        let s = try H264SliceHeaderStart(nalUnit: Fixture.x264p720Slice0, spsByID: [:], ppsByID: [:])
        #expect(s.firstMbInSlice == 0 && s.nalUnitType == 5 && s.nalRefIdc == 3)
        #expect(s.frameNum == nil && s.fieldPicFlag == nil && s.idrPicId == nil && s.picOrderCntLsb == nil)
        #expect(!s.hasParameterSets)
    }

    @Test func sizeCap() throws {
        #expect(throws: BitstreamError.self) { try H264SPS(nalUnit: Fixture.x264p720SPS, maxWidth: 1279) }
        #expect(throws: BitstreamError.self) { try H264SPS(nalUnit: Fixture.x264p720SPS, maxHeight: 719) }
        #expect((try? H264SPS(nalUnit: Fixture.x264p720SPS, maxWidth: 1280, maxHeight: 720)) != nil)
    }

    @Test func wrongNALTypes() {
        #expect(throws: BitstreamError.self) { try H264SPS(nalUnit: Fixture.x264p720PPS) }
        #expect(throws: BitstreamError.self) { try H264PPS(nalUnit: Fixture.x264p720SPS) }
        #expect(throws: BitstreamError.self) { try H264SliceHeaderStart(nalUnit: Fixture.x264p720SPS, spsByID: [:], ppsByID: [:]) }
        #expect(throws: BitstreamError.self) { try H264SPS(nalUnit: [UInt8]()) }
    }
}

@Suite struct H265ParameterSetParsingTests {
    @Test func x265At30fps() throws {
        let vps = try H265VPS(nalUnit: Fixture.x265p720VPS)
        let sps = try H265SPS(nalUnit: Fixture.x265p720SPS)
        let pps = try H265PPS(nalUnit: Fixture.x265p720PPS)
        #expect(vps.vpsVideoParameterSetId == sps.spsVideoParameterSetId)
        #expect(vps.maxSubLayersMinus1 == sps.maxSubLayersMinus1)
        #expect(sps.generalProfileIdc == 1 && !sps.generalTierFlag && sps.generalLevelIdc > 0)
        #expect(sps.width == 1280 && sps.height == 720)
        #expect(sps.picWidthInLumaSamples == 1280 && sps.picHeightInLumaSamples == 720)
        #expect(sps.chromaFormatIdc == 1 && sps.bitDepthLuma == 8 && sps.bitDepthChroma == 8)
        #expect(sps.frameRate == 30.0) // vui_time_scale / vui_num_units_in_tick, no factor 2
        #expect(sps.log2CtbSize == 6 && sps.picWidthInCtbs == 20 && sps.picHeightInCtbs == 12 && sps.picSizeInCtbsY == 240)
        #expect(pps.ppsSeqParameterSetId == sps.seqParameterSetId)

        let slices = try h265SliceHeaders([Fixture.x265p720Slice0, Fixture.x265p720Slice1], sps, pps)
        #expect(slices[0].isIRAP && slices[0].isIDR && slices[0].noOutputOfPriorPicsFlag != nil)
        #expect(slices[0].firstSliceSegmentInPicFlag && slices[0].sliceSegmentAddress == 0)
        #expect(slices[0].sliceType == 2 && slices[0].slicePicOrderCntLsb == nil)
        #expect(slices[0].temporalIdPlus1 == 1 && slices[0].nuhLayerId == 0)
        #expect(slices[1].firstSliceSegmentInPicFlag && !slices[1].isIRAP && slices[1].slicePicOrderCntLsb != nil)
    }

    @Test func oddSizeTenBitAt25fps() throws {
        let sps = try H265SPS(nalUnit: Fixture.x265Odd10SPS)
        #expect(sps.generalProfileIdc == 2)
        #expect(sps.bitDepthLuma == 10 && sps.bitDepthChroma == 10)
        #expect(sps.picWidthInLumaSamples == 1920 && sps.picHeightInLumaSamples == 1080)
        #expect(sps.width == 1918 && sps.height == 1078)
        #expect(sps.frameRate == 25.0)
    }

    @Test func main422() throws {
        let sps = try H265SPS(nalUnit: Fixture.x265Main422SPS)
        #expect(sps.generalProfileIdc == 4)
        #expect(sps.chromaFormatIdc == 2 && sps.width == 640 && sps.height == 360)
    }

    @Test func fourSliceSegmentsPerPicture() throws {
        let sps = try H265SPS(nalUnit: Fixture.x265SlicesSPS)
        let pps = try H265PPS(nalUnit: Fixture.x265SlicesPPS)
        let slices = try h265SliceHeaders([
            Fixture.x265SlicesSlice0, Fixture.x265SlicesSlice1, Fixture.x265SlicesSlice2, Fixture.x265SlicesSlice3,
            Fixture.x265SlicesSlice4,
        ], sps, pps)
        #expect(slices.map(\.firstSliceSegmentInPicFlag) == [true, false, false, false, true])
        let addresses = slices.compactMap(\.sliceSegmentAddress)
        #expect(addresses.count == 5 && addresses[0] == 0 && addresses[4] == 0)
        #expect(addresses[0] < addresses[1] && addresses[1] < addresses[2] && addresses[2] < addresses[3])
        #expect(addresses[3] < sps.picSizeInCtbsY)
        #expect(slices.allSatisfy { $0.dependentSliceSegmentFlag == false })
    }

    @Test func unknownParameterSetsLeaveFieldsNil() throws {
        let first = try H265SliceSegmentHeaderStart(nalUnit: Fixture.x265SlicesSlice0, spsByID: [:], ppsByID: [:])
        #expect(first.firstSliceSegmentInPicFlag && first.sliceSegmentAddress == 0 && first.sliceType == nil)
        let second = try H265SliceSegmentHeaderStart(nalUnit: Fixture.x265SlicesSlice1, spsByID: [:], ppsByID: [:])
        #expect(!second.firstSliceSegmentInPicFlag && second.sliceSegmentAddress == nil && second.dependentSliceSegmentFlag == nil)
    }

    @Test func sizeCap() throws {
        #expect(throws: BitstreamError.self) { try H265SPS(nalUnit: Fixture.x265p720SPS, maxWidth: 1279) }
        #expect(throws: BitstreamError.self) { try H265SPS(nalUnit: Fixture.x265p720SPS, maxHeight: 719) }
        #expect((try? H265SPS(nalUnit: Fixture.x265p720SPS, maxWidth: 1280, maxHeight: 720)) != nil)
    }

    @Test func wrongNALTypes() {
        #expect(throws: BitstreamError.self) { try H265SPS(nalUnit: Fixture.x265p720PPS) }
        #expect(throws: BitstreamError.self) { try H265PPS(nalUnit: Fixture.x265p720SPS) }
        #expect(throws: BitstreamError.self) { try H265VPS(nalUnit: Fixture.x265p720SPS) }
        #expect(throws: BitstreamError.self) {
            try H265SliceSegmentHeaderStart(nalUnit: Fixture.x265p720VPS, spsByID: [:], ppsByID: [:])
        }
    }
}

// MARK: - Robustness

/// Calls `parse` on every prefix of `nal` and on `count` random mutations of it (1–4 bytes changed, sometimes
/// shortened; half of them keep the original NAL header). The parser may throw or succeed; it must not trap.
private func fuzz(_ nal: [UInt8], count: Int = 2000, seed: UInt64, _ parse: ([UInt8]) -> Void) {
    for n in 0...nal.count { parse(Array(nal.prefix(n))) }
    var rng = SeededRandom(seed: seed)
    for _ in 0..<count {
        var m = nal
        for _ in 0..<Int.random(in: 1...4, using: &rng) where !m.isEmpty {
            let i = Int.random(in: 0..<m.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: m[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: m[i] ^= 1 << UInt8.random(in: 0...7, using: &rng)
            case 2: m[i] = [0x00, 0xFF, 0x03][Int.random(in: 0..<3, using: &rng)]
            default: m.removeLast(Int.random(in: 0...min(8, m.count), using: &rng))
            }
        }
        if Bool.random(using: &rng) && m.count > 1 {
            m[0] = nal[0]
            if nal.count > 1 { m[1] = nal[1] }
        }
        parse(m)
    }
}

@Suite struct ParameterSetRobustnessTests {
    @Test func h264TruncationsAndMutations() throws {
        let groups: [(sps: [UInt8], pps: [UInt8], slices: [[UInt8]])] = [
            (Fixture.x264p720SPS, Fixture.x264p720PPS, [Fixture.x264p720Slice0, Fixture.x264p720Slice1]),
            (Fixture.x264Odd25SPS, Fixture.x264Odd25PPS, []),
            (Fixture.x264High422SPS, Fixture.x264High422PPS, []),
            (Fixture.x264InterlacedSPS, Fixture.x264InterlacedPPS, []),
            (Fixture.x264SlicesSPS, Fixture.x264SlicesPPS, [Fixture.x264SlicesSlice1, Fixture.x264SlicesSlice5]),
            (CraftedH264.sps(), CraftedH264.pps(), [CraftedH264.slice(firstMb: 10, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: -1)]),
        ]
        for (k, g) in groups.enumerated() {
            let sps = try H264SPS(nalUnit: g.sps)
            let pps = try H264PPS(nalUnit: g.pps)
            let spsByID = [sps.seqParameterSetId: sps]
            let ppsByID = [pps.picParameterSetId: pps]
            let seed = UInt64(k) * 100
            fuzz(g.sps, seed: seed) { m in
                if let s = try? H264SPS(nalUnit: m) { #expect(s.width <= 8192 && s.height <= 4320) }
            }
            fuzz(g.pps, seed: seed + 1) { m in _ = try? H264PPS(nalUnit: m) }
            for (j, slice) in g.slices.enumerated() {
                fuzz(slice, seed: seed + 2 + UInt64(j)) { m in
                    _ = try? H264SliceHeaderStart(nalUnit: m, spsByID: spsByID, ppsByID: ppsByID)
                }
            }
        }
    }

    @Test func h265TruncationsAndMutations() throws {
        let groups: [(vps: [UInt8]?, sps: [UInt8], pps: [UInt8], slices: [[UInt8]])] = [
            (Fixture.x265p720VPS, Fixture.x265p720SPS, Fixture.x265p720PPS, [Fixture.x265p720Slice0, Fixture.x265p720Slice1]),
            (Fixture.x265Odd10VPS, Fixture.x265Odd10SPS, Fixture.x265Odd10PPS, []),
            (Fixture.x265Main422VPS, Fixture.x265Main422SPS, Fixture.x265Main422PPS, []),
            (Fixture.x265SlicesVPS, Fixture.x265SlicesSPS, Fixture.x265SlicesPPS, [Fixture.x265SlicesSlice1, Fixture.x265SlicesSlice4]),
            (nil, CraftedH265.sps(), CraftedH265.pps(), [CraftedH265.slice(type: 1, first: false, dependent: false, address: 2, pocLsb: 77)]),
        ]
        for (k, g) in groups.enumerated() {
            let sps = try H265SPS(nalUnit: g.sps)
            let pps = try H265PPS(nalUnit: g.pps)
            let spsByID = [sps.seqParameterSetId: sps]
            let ppsByID = [pps.ppsPicParameterSetId: pps]
            let seed = 1000 + UInt64(k) * 100
            if let vps = g.vps { fuzz(vps, seed: seed + 50) { m in _ = try? H265VPS(nalUnit: m) } }
            fuzz(g.sps, seed: seed) { m in
                if let s = try? H265SPS(nalUnit: m) { #expect(s.width <= 8192 && s.height <= 4320) }
            }
            fuzz(g.pps, seed: seed + 1) { m in _ = try? H265PPS(nalUnit: m) }
            for (j, slice) in g.slices.enumerated() {
                fuzz(slice, seed: seed + 2 + UInt64(j)) { m in
                    _ = try? H265SliceSegmentHeaderStart(nalUnit: m, spsByID: spsByID, ppsByID: ppsByID)
                }
            }
        }
    }

    /// Random bodies behind valid SPS/PPS/VPS headers: every one is parsed or refused with an
    /// error (never a crash), and whatever parses announces a picture within the default
    /// ``PictureSizeCap`` and in-range ids (ITU-T H.264 §7.4.2.1.1, §7.4.2.2; H.265 §7.4.3).
    @Test func randomBytesBehindValidHeaders() {
        var rng = SeededRandom(seed: 7)
        let cap = PictureSizeCap.default
        var parsed = 0, refused = 0
        func count<T>(_ r: T?) { if r == nil { refused += 1 } else { parsed += 1 } }
        for _ in 0..<5000 {
            let body = (0..<Int.random(in: 0...48, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let sps = try? H264SPS(nalUnit: [0x67] + body)
            if let sps { #expect(sps.width <= cap.width && sps.height <= cap.height && sps.seqParameterSetId <= 31) }
            count(sps)
            let pps = try? H264PPS(nalUnit: [0x68] + body)
            if let pps { #expect(pps.picParameterSetId <= 255 && pps.seqParameterSetId <= 31) }
            count(pps)
            count(try? H265VPS(nalUnit: [0x40, 0x01] + body))
            let hsps = try? H265SPS(nalUnit: [0x42, 0x01] + body)
            if let hsps { #expect(hsps.width <= cap.width && hsps.height <= cap.height) }
            count(hsps)
            count(try? H265PPS(nalUnit: [0x44, 0x01] + body))
        }
        #expect(parsed + refused == 5 * 5000)
        #expect(refused > 0, "random bodies must be refused at times")
    }
}

// MARK: - Hand-built NAL units

/// Writes bits MSB-first with the H.264/H.265 descriptors.
private struct BitWriter {
    var bytes: [UInt8] = []
    var bitCount = 0
    mutating func u(_ n: Int, _ v: UInt64) {
        for i in stride(from: n - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (v >> UInt64(i)) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(bitCount % 8) }
            bitCount += 1
        }
    }
    mutating func flag(_ b: Bool) { u(1, b ? 1 : 0) }
    mutating func ue(_ v: UInt64) {
        let x = v + 1
        let len = 64 - x.leadingZeroBitCount
        u(len - 1, 0)
        u(len, x)
    }
    mutating func se(_ v: Int) { ue(v > 0 ? UInt64(2 * v - 1) : UInt64(-2 * v)) }
    /// rbsp_trailing_bits, then the NAL header bytes and emulation prevention.
    func nal(header: [UInt8]) -> [UInt8] {
        var w = self
        w.u(1, 1)
        while w.bitCount % 8 != 0 { w.u(1, 0) }
        return header + RBSP.escape(w.bytes)
    }
}

/// Hand-built NAL units.
private enum CraftedH264 {
    /// High profile, 4:2:0, SPS scaling lists, POC type 1, field coding allowed, cropping, full VUI with HRD.
    static func sps() -> [UInt8] {
        var w = BitWriter()
        w.u(8, 100); w.u(8, 0); w.u(8, 40) // profile_idc, constraint flags, level_idc
        w.ue(3) // seq_parameter_set_id
        w.ue(1) // chroma_format_idc
        w.ue(2); w.ue(2) // bit depths 10
        w.flag(false) // qpprime_y_zero_transform_bypass_flag
        w.flag(true) // seq_scaling_matrix_present_flag
        for i in 0..<8 {
            w.flag(i != 1) // seq_scaling_list_present_flag[i]
            guard i != 1 else { continue }
            if i == 2 {
                w.se(-8) // useDefaultScalingMatrixFlag: nextScale 0 at j = 0 ends the list
                continue
            }
            let size = i < 6 ? 16 : 64
            for j in 0..<size { w.se(j % 2 == 0 ? 5 : -3) } // never reaches nextScale 0
        }
        w.ue(0) // log2_max_frame_num_minus4 → 4 bits
        w.ue(1) // pic_order_cnt_type
        w.flag(false) // delta_pic_order_always_zero_flag
        w.se(-2); w.se(1) // offset_for_non_ref_pic, offset_for_top_to_bottom_field
        w.ue(2); w.se(4); w.se(-4) // num_ref_frames_in_pic_order_cnt_cycle, offsets
        w.ue(4) // max_num_ref_frames
        w.flag(false)
        w.ue(119); w.ue(33) // 1920 wide, 34 map units → 68 MBs high as fields
        w.flag(false) // frame_mbs_only_flag
        w.flag(true) // mb_adaptive_frame_field_flag
        w.flag(true) // direct_8x8_inference_flag
        w.flag(true); w.ue(1); w.ue(2); w.ue(0); w.ue(2) // cropping: x 2·(1+2)=6, y 4·2=8
        w.flag(true) // vui_parameters_present_flag
        w.flag(true); w.u(8, 255); w.u(16, 4); w.u(16, 3) // Extended_SAR 4:3
        w.flag(true); w.flag(true) // overscan
        w.flag(true); w.u(3, 5); w.flag(true); w.flag(true); w.u(8, 1); w.u(8, 1); w.u(8, 1) // BT.709 full range
        w.flag(true); w.ue(1); w.ue(1) // chroma loc
        w.flag(true); w.u(32, 1001); w.u(32, 60000); w.flag(true) // 29.97 fps
        w.flag(true) // nal_hrd_parameters_present_flag
        w.ue(1); w.u(4, 2); w.u(4, 3) // cpb_cnt_minus1 = 1
        for _ in 0..<2 { w.ue(1000); w.ue(2000); w.flag(false) }
        w.u(5, 23); w.u(5, 23); w.u(5, 23); w.u(5, 24)
        w.flag(false) // vcl_hrd_parameters_present_flag
        w.flag(true) // low_delay_hrd_flag
        w.flag(true) // pic_struct_present_flag
        w.flag(true); w.flag(true); w.ue(2); w.ue(1); w.ue(16); w.ue(16); w.ue(1); w.ue(3)
        return w.nal(header: [0x67])
    }

    static func pps() -> [UInt8] {
        var w = BitWriter()
        w.ue(7); w.ue(3) // pps id, sps id
        w.flag(true); w.flag(true) // CABAC, bottom_field_pic_order_in_frame_present_flag
        w.ue(2); w.ue(6); w.ue(99) // 3 slice groups, map type 6, pic_size_in_map_units_minus1
        for i in 0..<100 { w.u(2, UInt64(i % 3)) } // slice_group_id, Ceil(Log2(3)) = 2 bits
        w.ue(3); w.ue(1); w.flag(true); w.u(2, 2) // ref idx defaults, weighted pred / bipred
        w.se(-3); w.se(0); w.se(-2) // pic_init_qp/qs, chroma_qp_index_offset
        w.flag(true); w.flag(false); w.flag(true) // deblocking control, constrained intra, redundant_pic_cnt
        return w.nal(header: [0x68])
    }

    /// A non-IDR slice with POC type 1 deltas.
    static func slice(firstMb: UInt64, frameNum: UInt64, fieldPic: Bool, bottom: Bool, delta0: Int, delta1: Int, refIdc: UInt8 = 2) -> [UInt8] {
        var w = BitWriter()
        w.ue(firstMb); w.ue(5); w.ue(7) // first_mb_in_slice, slice_type P (all), pps id
        w.u(4, frameNum)
        w.flag(fieldPic)
        if fieldPic { w.flag(bottom) }
        w.se(delta0)
        if !fieldPic { w.se(delta1) }
        w.ue(0) // redundant_pic_cnt … (ignored by the parser)
        return w.nal(header: [refIdc << 5 | 1])
    }
}

@Suite struct H264CraftedParameterSetTests {
    @Test func scalingListsPOCType1AndVUI() throws {
        let sps = try H264SPS(nalUnit: CraftedH264.sps())
        #expect(sps.seqParameterSetId == 3)
        #expect(sps.bitDepthLuma == 10 && sps.bitDepthChroma == 10)
        #expect(sps.seqScalingMatrixPresentFlag)
        #expect(sps.picOrderCntType == 1 && sps.log2MaxPicOrderCntLsb == nil)
        #expect(sps.offsetForNonRefPic == -2 && sps.offsetForTopToBottomField == 1)
        #expect(sps.offsetForRefFrame == [4, -4])
        #expect(!sps.frameMbsOnlyFlag && sps.mbAdaptiveFrameFieldFlag)
        #expect(sps.codedWidth == 1920 && sps.codedHeight == 1088)
        #expect(sps.width == 1914 && sps.height == 1080)
        #expect(sps.sampleAspectRatio?.num == 4 && sps.sampleAspectRatio?.den == 3)
        #expect(sps.videoFullRangeFlag && sps.colourPrimaries == 1 && sps.matrixCoefficients == 1)
        #expect(sps.numUnitsInTick == 1001 && sps.timeScale == 60000 && sps.fixedFrameRateFlag)
        #expect(abs(sps.frameRate! - 29.97) < 0.001)
        #expect(sps.nalHrdParametersPresentFlag && !sps.vclHrdParametersPresentFlag && sps.lowDelayHrdFlag)
        #expect(sps.picStructPresentFlag)
        #expect(sps.maxNumReorderFrames == 1 && sps.maxDecFrameBuffering == 3)
    }

    @Test func ppsWithSliceGroups() throws {
        let pps = try H264PPS(nalUnit: CraftedH264.pps())
        #expect(pps.picParameterSetId == 7 && pps.seqParameterSetId == 3)
        #expect(pps.entropyCodingModeFlag && pps.bottomFieldPicOrderInFramePresentFlag)
        #expect(pps.numSliceGroupsMinus1 == 2 && pps.sliceGroupMapType == 6)
        #expect(pps.numRefIdxL0DefaultActiveMinus1 == 3 && pps.numRefIdxL1DefaultActiveMinus1 == 1)
        #expect(pps.weightedPredFlag && pps.weightedBipredIdc == 2)
        #expect(pps.picInitQpMinus26 == -3 && pps.chromaQpIndexOffset == -2)
        #expect(pps.deblockingFilterControlPresentFlag && !pps.constrainedIntraPredFlag && pps.redundantPicCntPresentFlag)
    }

    @Test func pictureBoundariesWithPOCType1() throws {
        let spsByID = [3: try H264SPS(nalUnit: CraftedH264.sps())]
        let ppsByID = [7: try H264PPS(nalUnit: CraftedH264.pps())]
        func parse(_ nal: [UInt8]) throws -> H264SliceHeaderStart {
            try H264SliceHeaderStart(nalUnit: nal, spsByID: spsByID, ppsByID: ppsByID)
        }
        let a = try parse(CraftedH264.slice(firstMb: 10, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: -1))
        #expect(a.frameNum == 3 && a.fieldPicFlag == false && a.deltaPicOrderCnt0 == 2 && a.deltaPicOrderCnt1 == -1)
        #expect(a.picOrderCntLsb == nil && a.idrPicId == nil)
        let same = try parse(CraftedH264.slice(firstMb: 20, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: -1))
        #expect(!H264SliceHeaderStart.startsNewPicture(previous: a, current: same))
        let otherDelta = try parse(CraftedH264.slice(firstMb: 20, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: 0))
        #expect(H264SliceHeaderStart.startsNewPicture(previous: a, current: otherDelta))
        let nonRef = try parse(CraftedH264.slice(firstMb: 20, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: -1, refIdc: 0))
        #expect(H264SliceHeaderStart.startsNewPicture(previous: a, current: nonRef))
        let otherRef = try parse(CraftedH264.slice(firstMb: 20, frameNum: 3, fieldPic: false, bottom: false, delta0: 2, delta1: -1, refIdc: 3))
        #expect(!H264SliceHeaderStart.startsNewPicture(previous: a, current: otherRef))
        let top = try parse(CraftedH264.slice(firstMb: 10, frameNum: 4, fieldPic: true, bottom: false, delta0: 0, delta1: 0))
        let bottom = try parse(CraftedH264.slice(firstMb: 10, frameNum: 4, fieldPic: true, bottom: true, delta0: 0, delta1: 0))
        #expect(top.fieldPicFlag == true && top.bottomFieldFlag == false && top.deltaPicOrderCnt1 == nil)
        #expect(H264SliceHeaderStart.startsNewPicture(previous: top, current: bottom))
        #expect(H264SliceHeaderStart.startsNewPicture(previous: a, current: top))
    }

}

/// Hand-built NAL units.
private enum CraftedH265 {
    /// Main profile 64×64 with a CTB of 32, sps scaling list data, three short-term RPSs (two inter-predicted),
    /// two long-term pictures, and a VUI with two sub-layers of HRD parameters.
    static func sps() -> [UInt8] {
        var w = BitWriter()
        w.u(4, 1); w.u(3, 1); w.flag(true) // vps id 1, max_sub_layers_minus1 1, nesting
        // profile_tier_level(1, 1)
        w.u(2, 0); w.flag(true); w.u(5, 1); w.u(32, 0x6000_0000); w.u(4, 0b1001); w.u(44, 0); w.u(8, 120)
        w.flag(true); w.flag(true) // sub_layer_profile_present_flag[0], sub_layer_level_present_flag[0]
        for _ in 1..<8 { w.u(2, 0) } // reserved_zero_2bits
        w.u(88, 0); w.u(8, 90) // sub-layer profile, sub_layer_level_idc
        w.ue(2) // sps_seq_parameter_set_id
        w.ue(1) // chroma_format_idc
        w.ue(64); w.ue(64)
        w.flag(true); w.ue(1); w.ue(2); w.ue(0); w.ue(3) // conformance window → 58×58
        w.ue(0); w.ue(0) // bit depths
        w.ue(4) // log2_max_pic_order_cnt_lsb_minus4 → 8 bits
        w.flag(true) // sps_sub_layer_ordering_info_present_flag
        w.ue(2); w.ue(1); w.ue(0)
        w.ue(4); w.ue(2); w.ue(5)
        w.ue(0); w.ue(2) // MinCb 8, CTB 32
        w.ue(0); w.ue(3) // TB 4…32
        w.ue(1); w.ue(2) // hierarchy depths
        w.flag(true); w.flag(true) // scaling_list_enabled_flag, sps_scaling_list_data_present_flag
        for sizeId in 0..<4 {
            for matrixId in stride(from: 0, to: 6, by: sizeId == 3 ? 3 : 1) {
                if matrixId % 2 == 1 {
                    w.flag(false); w.ue(1) // predicted from the previous matrix
                } else {
                    w.flag(true)
                    if sizeId > 1 { w.se(8) }
                    for k in 0..<min(64, 1 << (4 + (sizeId << 1))) { w.se(k % 3 - 1) }
                }
            }
        }
        w.flag(true); w.flag(true) // amp, sao
        w.flag(true); w.u(4, 7); w.u(4, 7); w.ue(0); w.ue(1); w.flag(true) // pcm
        w.ue(3) // num_short_term_ref_pic_sets
        // Set 0: S0 = [-1, -3], S1 = [2].
        w.ue(2); w.ue(1)
        w.ue(0); w.flag(true); w.ue(1); w.flag(true)
        w.ue(1); w.flag(false)
        // Set 1: predicted from set 0 with deltaRps = -1; entry 2 not used by the current picture but kept.
        w.flag(true); w.flag(true); w.ue(0)
        w.flag(true); w.flag(true); w.flag(false); w.flag(true); w.flag(true)
        // Set 2: predicted from set 1 with deltaRps = +2; entry 4 (deltaRps itself) dropped.
        w.flag(true); w.flag(false); w.ue(1)
        w.flag(true); w.flag(true); w.flag(true); w.flag(true); w.flag(false); w.flag(false)
        w.flag(true); w.ue(2) // long_term_ref_pics_present_flag, num_long_term_ref_pics_sps
        w.u(8, 17); w.flag(true); w.u(8, 200); w.flag(false)
        w.flag(true); w.flag(true) // temporal MVP, strong intra smoothing
        w.flag(true) // vui_parameters_present_flag
        w.flag(true); w.u(8, 14) // aspect_ratio_idc 14 → 4:3
        w.flag(false) // overscan
        w.flag(true); w.u(3, 5); w.flag(true); w.flag(true); w.u(8, 9); w.u(8, 16); w.u(8, 9) // BT.2020 PQ full
        w.flag(false) // chroma loc
        w.flag(false); w.flag(false); w.flag(true) // neutral chroma, field_seq, frame_field_info
        w.flag(true); w.ue(0); w.ue(8); w.ue(0); w.ue(4) // default display window
        w.flag(true); w.u(32, 1001); w.u(32, 60000) // 59.94 fps
        w.flag(true); w.ue(0) // poc proportional
        w.flag(true) // vui_hrd_parameters_present_flag
        w.flag(true); w.flag(true) // nal, vcl
        w.flag(true); w.u(8, 23); w.u(5, 3); w.flag(false); w.u(5, 4) // sub-pic params
        w.u(4, 1); w.u(4, 2); w.u(4, 3); w.u(5, 20); w.u(5, 20); w.u(5, 20)
        // Sub-layer 0: not fixed rate, low delay → one CPB.
        w.flag(false); w.flag(false); w.flag(true)
        for _ in 0..<2 { w.ue(10); w.ue(20); w.ue(30); w.ue(40); w.flag(false) }
        // Sub-layer 1: fixed rate, two CPBs.
        w.flag(true); w.ue(0); w.ue(1)
        for _ in 0..<4 { w.ue(10); w.ue(20); w.ue(30); w.ue(40); w.flag(true) }
        w.flag(true); w.flag(false); w.flag(true); w.flag(true) // bitstream restriction
        w.ue(100); w.ue(2); w.ue(1); w.ue(15); w.ue(14)
        w.flag(false) // sps_extension_present_flag
        return w.nal(header: [0x42, 0x01])
    }

    static func pps() -> [UInt8] {
        var w = BitWriter()
        w.ue(5); w.ue(2) // pps id, sps id
        w.flag(true); w.flag(true); w.u(3, 2) // dependent slices, output flag, 2 extra bits
        w.flag(false); w.flag(true); w.ue(2); w.ue(1); w.se(-4)
        w.flag(false); w.flag(true); w.flag(true); w.ue(2) // cu_qp_delta, diff depth 2
        w.se(3); w.se(-3); w.flag(true); w.flag(true); w.flag(false); w.flag(false)
        w.flag(true); w.flag(true) // tiles, wpp
        w.ue(1); w.ue(1); w.flag(false); w.ue(0); w.ue(0); w.flag(true) // 2×2 tiles, explicit sizes
        w.flag(true); w.flag(true); w.flag(true); w.flag(false); w.se(-2); w.se(6)
        w.flag(false) // pps_scaling_list_data_present_flag
        w.flag(true); w.ue(2); w.flag(true)
        return w.nal(header: [0x44, 0x01])
    }

    static func slice(type: UInt8, first: Bool, dependent: Bool, address: UInt64, pocLsb: UInt64) -> [UInt8] {
        var w = BitWriter()
        w.flag(first)
        if type >= 16 && type <= 23 { w.flag(false) }
        w.ue(5)
        if !first {
            w.flag(dependent)
            w.u(2, address) // PicSizeInCtbsY = 4 → 2 bits
        }
        if !dependent {
            w.u(2, 3) // slice_reserved_flag × 2
            w.ue(1) // P
            w.flag(false) // pic_output_flag
            if type != 19 && type != 20 { w.u(8, pocLsb) }
        }
        w.ue(0)
        return w.nal(header: [type << 1, 0x01])
    }
}

@Suite struct H265CraftedParameterSetTests {
    @Test func interRPSScalingListsAndVUI() throws {
        let sps = try H265SPS(nalUnit: CraftedH265.sps())
        #expect(sps.spsVideoParameterSetId == 1 && sps.maxSubLayersMinus1 == 1 && sps.seqParameterSetId == 2)
        #expect(sps.generalTierFlag && sps.generalProfileIdc == 1 && sps.generalLevelIdc == 120)
        #expect(sps.generalProfileCompatibilityFlags == 0x6000_0000 && sps.generalProgressiveSourceFlag)
        #expect(sps.width == 58 && sps.height == 58)
        #expect(sps.log2MaxPicOrderCntLsb == 8)
        #expect(sps.spsMaxDecPicBufferingMinus1 == 4 && sps.spsMaxNumReorderPics == 2 && sps.spsMaxLatencyIncreasePlus1 == 5)
        #expect(sps.log2MinLumaCodingBlockSize == 3 && sps.log2CtbSize == 5)
        #expect(sps.picWidthInCtbs == 2 && sps.picHeightInCtbs == 2 && sps.picSizeInCtbsY == 4)
        #expect(sps.pcmEnabledFlag && sps.scalingListEnabledFlag)
        #expect(sps.numShortTermRefPicSets == 3)
        let rps = sps.shortTermRefPicSets
        #expect(rps[0].deltaPocS0 == [-1, -3] && rps[0].deltaPocS1 == [2])
        #expect(rps[0].usedByCurrPicS0 == [true, true] && rps[0].usedByCurrPicS1 == [false])
        #expect(rps[1].deltaPocS0 == [-1, -2, -4] && rps[1].deltaPocS1 == [1])
        #expect(rps[1].usedByCurrPicS0 == [true, true, true] && rps[1].usedByCurrPicS1 == [false])
        #expect(rps[2].deltaPocS0 == [-2] && rps[2].deltaPocS1 == [1, 3])
        #expect(rps[2].numDeltaPocs == 3)
        #expect(sps.longTermRefPicsPresentFlag && sps.numLongTermRefPicsSps == 2)
        #expect(sps.spsTemporalMvpEnabledFlag && sps.strongIntraSmoothingEnabledFlag)
        #expect(sps.sampleAspectRatio?.num == 4 && sps.sampleAspectRatio?.den == 3)
        #expect(sps.videoFullRangeFlag && sps.colourPrimaries == 9 && sps.transferCharacteristics == 16)
        #expect(sps.frameFieldInfoPresentFlag)
        #expect(sps.numUnitsInTick == 1001 && sps.timeScale == 60000)
        #expect(abs(sps.frameRate! - 59.94) < 0.001)
        #expect(sps.numTicksPocDiffOne == 1 && sps.hrdParametersPresentFlag && sps.fixedFrameRateFlag)
        #expect(sps.bitstreamRestrictionFlag && sps.restrictedRefPicListsFlag == true)
        #expect(sps.minSpatialSegmentationIdc == 100 && sps.log2MaxMvLengthHorizontal == 15 && sps.log2MaxMvLengthVertical == 14)
    }

    @Test func ppsWithTiles() throws {
        let pps = try H265PPS(nalUnit: CraftedH265.pps())
        #expect(pps.ppsPicParameterSetId == 5 && pps.ppsSeqParameterSetId == 2)
        #expect(pps.dependentSliceSegmentsEnabledFlag && pps.outputFlagPresentFlag && pps.numExtraSliceHeaderBits == 2)
        #expect(pps.initQpMinus26 == -4 && pps.diffCuQpDeltaDepth == 2)
        #expect(pps.tilesEnabledFlag && pps.numTileColumnsMinus1 == 1 && pps.entropyCodingSyncEnabledFlag)
        #expect(pps.deblockingFilterControlPresentFlag && pps.deblockingFilterOverrideEnabledFlag && !pps.ppsDeblockingFilterDisabledFlag)
        #expect(pps.listsModificationPresentFlag && pps.log2ParallelMergeLevel == 4 && pps.sliceSegmentHeaderExtensionPresentFlag)
    }

    @Test func sliceSegments() throws {
        let spsByID = [2: try H265SPS(nalUnit: CraftedH265.sps())]
        let ppsByID = [5: try H265PPS(nalUnit: CraftedH265.pps())]
        let idr = try H265SliceSegmentHeaderStart(nalUnit: CraftedH265.slice(type: 19, first: true, dependent: false, address: 0, pocLsb: 0),
                                                  spsByID: spsByID, ppsByID: ppsByID)
        #expect(idr.isIDR && idr.noOutputOfPriorPicsFlag == false && idr.sliceSegmentAddress == 0)
        #expect(idr.sliceType == 1 && idr.picOutputFlag == false && idr.slicePicOrderCntLsb == nil)
        let dep = try H265SliceSegmentHeaderStart(nalUnit: CraftedH265.slice(type: 1, first: false, dependent: true, address: 3, pocLsb: 0),
                                                  spsByID: spsByID, ppsByID: ppsByID)
        #expect(dep.dependentSliceSegmentFlag == true && dep.sliceSegmentAddress == 3 && dep.sliceType == nil)
        #expect(dep.noOutputOfPriorPicsFlag == nil)
        let trail = try H265SliceSegmentHeaderStart(nalUnit: CraftedH265.slice(type: 1, first: false, dependent: false, address: 2, pocLsb: 77),
                                                    spsByID: spsByID, ppsByID: ppsByID)
        #expect(trail.dependentSliceSegmentFlag == false && trail.sliceSegmentAddress == 2 && trail.slicePicOrderCntLsb == 77)
    }

}
