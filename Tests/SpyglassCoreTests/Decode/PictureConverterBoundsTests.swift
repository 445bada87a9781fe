import CFFmpeg
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay

/// A picture converted into a rectangle of a shared surface (a wall tile, the window) writes that
/// rectangle and nothing else. libswscale's SIMD writes whole blocks of pixels: into a 250-pixel
/// wide tile it wrote 6 pixels of its picture into the tile beside it, which stayed there when
/// that tile never sent (a newcomer saw a 4-pixel column of another feed after a resize), and
/// at the window's right edge it wrote past the surface's last byte.
@Suite struct PictureConverterBoundsTests {
    /// A `width` x `height` picture in `format`, luma 200, chroma 128.
    static func picture(width: Int, height: Int, format: AVPixelFormat) -> DecodedPicture {
        let f = av_frame_alloc()!
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        f.pointee.format = format.rawValue
        precondition(av_frame_get_buffer(f, 0) >= 0)
        precondition(av_frame_make_writable(f) >= 0)
        // Every byte set (chroma neutral): av_frame_get_buffer leaves the planes as they were in
        // memory, and a chroma byte that converted to 0xAB, the canary, failed the test now and
        // then.
        for buf in [f.pointee.buf.0, f.pointee.buf.1, f.pointee.buf.2] { if let b = buf { memset(b.pointee.data, 128, b.pointee.size) } }
        for y in 0..<height { for x in 0..<Int(f.pointee.linesize.0) { f.pointee.data.0![y * Int(f.pointee.linesize.0) + x] = 200 } }
        return DecodedPicture(frame: f)
    }

    @Test(arguments: [(AV_PIX_FMT_YUV420P, false), (AV_PIX_FMT_YUV420P, true), (AV_PIX_FMT_YUV422P, false), (AV_PIX_FMT_YUV420P10LE, false)],
          [250, 230, 232, 320, 243, 248])
    func onlyTheDestinationRectangleIsWritten(input: (AVPixelFormat, Bool), width: Int) {
        let (format, fast) = input
        let converter = PictureConverter()
        converter.fastScaling = fast
        let height = 90, margin = 32
        let pitch = (width + margin) * 4
        var surface = [UInt8](repeating: 0xAB, count: pitch * (height + 1))
        // Scaled (320x180 into the rectangle), and unscaled when the widths agree.
        for source in [Self.picture(width: 320, height: 180, format: format), Self.picture(width: width, height: height, format: format)] {
            let ok = surface.withUnsafeMutableBytes { b in
                converter.convert(source, into: b.baseAddress!, pitch: pitch, width: width, height: height, format: AV_PIX_FMT_BGR0)
            }
            #expect(ok)
            var outside = 0
            for y in 0...height {
                for x in (y < height ? width * 4 : 0)..<pitch where surface[y * pitch + x] != 0xAB { outside += 1 }
            }
            #expect(outside == 0, "\(format.rawValue) \(source.width)x\(source.height) into \(width)x\(height): \(outside) bytes written outside")
            #expect(surface[0] != 0xAB && surface[(height - 1) * pitch + (width - 1) * 4] != 0xAB, "and the rectangle itself was written")
        }
    }
}
