// TilePrescaler with real libavutil frames and real libswscale: what it shrinks, to what size,
// in which format, range and matrix, and when it leaves a picture alone.
import CFFmpeg
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

@Suite struct TilePrescalerTests {
    /// A `width` x `height` picture: luma 50 on the left half and 200 on the right, neutral chroma.
    static func picture(width: Int = 320, height: Int = 180, format: AVPixelFormat = AV_PIX_FMT_YUV420P,
                        fullRange: Bool = false) -> DecodedFrame {
        let f = av_frame_alloc()!
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        f.pointee.format = format.rawValue
        f.pointee.colorspace = AVCOL_SPC_BT709
        f.pointee.color_range = fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        precondition(av_frame_get_buffer(f, 0) >= 0)
        if format == AV_PIX_FMT_YUV420P {
            for y in 0..<height {
                for x in 0..<width { f.pointee.data.0![y * Int(f.pointee.linesize.0) + x] = x < width / 2 ? 50 : 200 }
            }
            for y in 0..<(height / 2) {
                for x in 0..<(width / 2) {
                    f.pointee.data.1![y * Int(f.pointee.linesize.1) + x] = 128
                    f.pointee.data.2![y * Int(f.pointee.linesize.2) + x] = 128
                }
            }
        }
        return DecodedFrame(picture: DecodedPicture(frame: f), index: 0, accessUnitIndex: 0, timing: FrameTiming(), damaged: false)
    }

    static func luma(_ d: DecodedPicture, _ x: Int, _ y: Int) -> UInt8 {
        d.frame.pointee.data.0![y * Int(d.frame.pointee.linesize.0) + x]
    }

    /// Within one step of 8-bit rounding.
    static func near(_ a: UInt8, _ b: Int) -> Bool { abs(Int(a) - b) <= 1 }

    @Test func aPictureLargerThanItsTileIsShrunkToTheLetterboxedSize() throws {
        let p = TilePrescaler()
        p.aim(.init(width: 200, height: 200, gravity: .letterbox))
        var frame = Self.picture(fullRange: true)
        p.prepare(&frame)
        let copy = try #require(frame.tileCopy)
        #expect(copy.source == PixelRect(x: 0, y: 0, width: 320, height: 180))
        #expect((copy.picture.width, copy.picture.height) == (200, 113), "16:9 letterboxed into 200 wide")
        #expect(copy.picture.pixelFormat == AV_PIX_FMT_YUV420P)
        #expect(copy.picture.isFullRange, "the range goes with the copy: no range conversion happened")
        #expect(copy.picture.colorSpace == AVCOL_SPC_BT709)
        #expect(Self.near(Self.luma(copy.picture, 20, 56), 50), "samples kept as they are, left")
        #expect(Self.near(Self.luma(copy.picture, 180, 56), 200), "and right")
    }

    @Test func fillShrinksOnlyThePartShown() throws {
        let p = TilePrescaler()
        p.aim(.init(width: 90, height: 90, gravity: .fill))
        var frame = Self.picture()
        p.prepare(&frame)
        let copy = try #require(frame.tileCopy)
        #expect(copy.source == PixelRect(x: 70, y: 0, width: 180, height: 180), "the centre square")
        #expect((copy.picture.width, copy.picture.height) == (90, 90))
        #expect(Self.near(Self.luma(copy.picture, 10, 45), 50) && Self.near(Self.luma(copy.picture, 80, 45), 200))
    }

    @Test func picturesAreLeftAloneWhenNotAimedNotLargerOrNot8Bit420() {
        let p = TilePrescaler()
        var unaimed = Self.picture()
        p.prepare(&unaimed)
        #expect(unaimed.tileCopy == nil, "no tile: no work")
        p.aim(.init(width: 320, height: 180, gravity: .letterbox))
        var sameSize = Self.picture()
        p.prepare(&sameSize)
        #expect(sameSize.tileCopy == nil, "the tile is as large as the picture")
        p.aim(.init(width: 160, height: 90, gravity: .stretch))
        var tenBit = Self.picture(format: AV_PIX_FMT_YUV420P10LE)
        p.prepare(&tenBit)
        #expect(tenBit.tileCopy == nil, "10-bit is scaled by the wall, exactly")
        p.aim(nil)
        var hidden = Self.picture()
        p.prepare(&hidden)
        #expect(hidden.tileCopy == nil, "a feed off screen costs nothing")
    }

    @Test func copiesComeFromOnePoolAndOutliveThePrescaler() throws {
        var p: TilePrescaler? = TilePrescaler()
        p!.aim(.init(width: 160, height: 90, gravity: .letterbox))
        var frames = (0..<5).map { _ in Self.picture() }
        for i in frames.indices { p!.prepare(&frames[i]) }
        let copies = frames.compactMap(\.tileCopy)
        #expect(copies.count == 5)
        #expect(Set(copies.map { Int(bitPattern: $0.picture.frame.pointee.data.0) }).count == 5, "each copy its own buffer while held")
        p = nil
        #expect(copies.allSatisfy { Self.near(Self.luma($0.picture, 10, 45), 50) }, "a copy stays valid after its prescaler is gone")
    }
}
