import CFFmpeg

/// Converts decoded pictures to 32-bit RGB with libswscale, in the stream's own colour matrix
/// and range (ITU-T H.273 `matrix_coefficients`, `video_full_range_flag`), scaled to any size.
///
/// 8-bit 4:2:0 at its own size takes libswscale's SIMD path (about 0.35 ms per 720p picture
/// here). Other formats (10-bit, 4:2:2, 4:4:4) and scaling use exact rounding and full chroma
/// interpolation. The libswscale context is kept while the input and output stay the same.
///
/// It also makes smaller 8-bit 4:2:0 copies of pictures (``scaledCopy(of:source:width:height:)``,
/// the wall's ``TilePrescaler``), in buffers from a libavutil pool.
package final class PictureConverter {
    private struct Key: Equatable {
        var srcWidth: Int32, srcHeight: Int32, srcFormat: Int32
        var dstWidth: Int, dstHeight: Int, dstFormat: Int32
        var colorspace: Int32, fullRange: Bool
    }

    private var context: OpaquePointer?
    private var key: Key?
    /// Buffers for ``scaledCopy(of:source:width:height:)`` (libavutil's pool: a copy's memory
    /// comes back when its last reference goes), and the size they have, bytes.
    private var pool: OpaquePointer?
    private var poolBytes: Int32 = 0
    /// Scale 8-bit 4:2:0 with libswscale's SIMD fast-bilinear path (the wall's many tiles), not
    /// only at the picture's own size: chroma is then interpolated less exactly. Measured on a
    /// 640x360 → 480x270 tile: 0.23 ms a picture against 0.30 ms with plain bilinear.
    package var fastScaling = false

    package init() {}

    deinit {
        if let context { sws_freeContext(context) }
        av_buffer_pool_uninit(&pool)
    }

    /// Converts `frame` (or its part `source`) into `pixels`.
    /// - Parameters:
    ///   - pixels: first byte of the destination rectangle; `pitch` bytes from one row to the next.
    ///   - width/height: destination size, pixels (the picture is scaled to it).
    ///   - format: `AV_PIX_FMT_BGR0` or `AV_PIX_FMT_BGRA` (SDL's XRGB8888 / ARGB8888 in memory).
    ///   - source: the part of the picture to convert, picture pixels (nil: all of it); clamped to
    ///     the picture, its origin rounded down to the chroma grid.
    /// - Returns: false when libswscale cannot convert this input (it is then not drawn).
    package func convert(_ frame: DecodedPicture, into pixels: UnsafeMutableRawPointer, pitch: Int,
                 width: Int, height: Int, format: AVPixelFormat, source: PixelRect? = nil) -> Bool {
        guard width % Self.safeWidthMultiple != 0 else {
            var dst: [UnsafeMutablePointer<UInt8>?] = [pixels.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
            var dstStride: [Int32] = [Int32(pitch), 0, 0, 0]
            return run(frame, source: source, width: width, height: height, format: format, dst: &dst, dstStride: &dstStride)
        }
        // libswscale's SIMD writes whole blocks of pixels: up to 14 past the end of each row
        // (a neighbouring tile's picture, the next row, or past the surface's last byte).
        // Converted in a padded scratch buffer, then copied row by row.
        let scratchPitch = (width + Self.safeWidthMultiple) * 4
        if scratch.count < scratchPitch * height { scratch = [UInt8](repeating: 0, count: scratchPitch * height) }
        return scratch.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            var dst: [UnsafeMutablePointer<UInt8>?] = [base, nil, nil, nil]
            var dstStride: [Int32] = [Int32(scratchPitch), 0, 0, 0]
            guard run(frame, source: source, width: width, height: height, format: format, dst: &dst, dstStride: &dstStride) else { return false }
            for y in 0..<height { (pixels + y * pitch).copyMemory(from: base + y * scratchPitch, byteCount: width * 4) }
            return true
        }
    }

    /// Destination widths that are a multiple of this are written exactly by libswscale (FFmpeg
    /// 5.1: at other widths its x86 SIMD writes up to 14 pixels past each row, measured for
    /// 4:2:0, 4:2:2, 4:4:4, 10-bit and NV12 input, scaled and unscaled, into 32-bit RGB).
    package static let safeWidthMultiple = 16
    /// The padded buffer other widths are converted in (kept: the size rarely changes).
    private var scratch: [UInt8] = []

    /// The part `source` of an 8-bit 4:2:0 `frame` scaled to `width` x `height` in its own pixel
    /// format, colour matrix, range and aspect (a smaller copy to convert later).
    /// - Returns: nil for other pixel formats, or when libswscale or the allocation fails.
    package func scaledCopy(of frame: DecodedPicture, source: PixelRect, width: Int, height: Int) -> DecodedPicture? {
        let format = frame.pixelFormat
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P, width > 0, height > 0,
              let copy = av_frame_alloc() else { return nil }
        copy.pointee.width = Int32(width)
        copy.pointee.height = Int32(height)
        copy.pointee.format = format.rawValue
        guard attachPooledBuffer(to: copy), av_frame_copy_props(copy, frame.frame) >= 0 else {
            var f: UnsafeMutablePointer<AVFrame>? = copy
            av_frame_free(&f)
            return nil
        }
        var dst = withUnsafeBytes(of: copy.pointee.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
        var dstStride = withUnsafeBytes(of: copy.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
        let scaled = DecodedPicture(frame: copy)
        return run(frame, source: source, width: width, height: height, format: format, dst: &dst, dstStride: &dstStride)
            ? scaled : nil
    }

    /// Gives `frame` (width, height and format set) planes in one buffer from the pool, 32-byte
    /// aligned rows for libswscale's SIMD.
    private func attachPooledBuffer(to frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let f = AVPixelFormat(rawValue: frame.pointee.format), w = frame.pointee.width, h = frame.pointee.height
        let bytes = av_image_get_buffer_size(f, w, h, 32)
        guard bytes > 0 else { return false }
        if pool == nil || bytes != poolBytes {
            av_buffer_pool_uninit(&pool)
            pool = av_buffer_pool_init(Int(bytes), nil)
            poolBytes = bytes
        }
        guard let buffer = av_buffer_pool_get(pool) else { return false }
        frame.pointee.buf.0 = buffer
        var data: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var lines: [Int32] = [0, 0, 0, 0]
        guard av_image_fill_arrays(&data, &lines, buffer.pointee.data, f, w, h, 32) >= 0 else { return false }
        frame.pointee.data = (data[0], data[1], data[2], data[3], nil, nil, nil, nil)
        frame.pointee.linesize = (lines[0], lines[1], lines[2], lines[3], 0, 0, 0, 0)
        // As libavutil's own frames: extended_data points at data (the frame's own field).
        let dataField = UnsafeMutableRawPointer(frame) + MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!
        frame.pointee.extended_data = dataField.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        return true
    }

    /// Scales and converts `frame`'s part `source` into the planes `dst`, keeping the context
    /// while the input and output stay the same.
    private func run(_ frame: DecodedPicture, source: PixelRect?, width: Int, height: Int, format: AVPixelFormat,
                     dst: inout [UnsafeMutablePointer<UInt8>?], dstStride: inout [Int32]) -> Bool {
        let f = frame.frame
        guard width > 0, height > 0, let desc = av_pix_fmt_desc_get(frame.pixelFormat) else { return false }
        let crop = Self.clamp(source, frame: f, desc: desc)
        let k = Key(srcWidth: Int32(crop.width), srcHeight: Int32(crop.height), srcFormat: f.pointee.format,
                    dstWidth: width, dstHeight: height, dstFormat: format.rawValue,
                    colorspace: Self.swsColorspace(frame), fullRange: frame.isFullRange)
        if k != key {
            if let context { sws_freeContext(context) }
            context = Self.context(for: k, frame: frame, fast: fastScaling)
            key = k
        }
        guard let context else { return false }
        var src = Self.planes(f, from: crop, desc: desc)
        var srcStride = withUnsafeBytes(of: f.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
        return sws_scale(context, &src, &srcStride, 0, Int32(crop.height), &dst, &dstStride) > 0
    }

    /// A libswscale context for `k`: 8-bit 4:2:0 takes the SIMD paths (fast-bilinear when `fast`
    /// and scaled); other formats exact rounding and full chroma interpolation.
    private static func context(for k: Key, frame: DecodedPicture, fast: Bool) -> OpaquePointer? {
        let plain = (frame.pixelFormat == AV_PIX_FMT_YUV420P || frame.pixelFormat == AV_PIX_FMT_YUVJ420P)
            && (fast || (k.srcWidth == k.dstWidth && k.srcHeight == k.dstHeight))
        let scaled = Int(k.srcWidth) != k.dstWidth || Int(k.srcHeight) != k.dstHeight
        let flags = !plain ? (SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            : fast && scaled ? SWS_FAST_BILINEAR : SWS_BILINEAR
        guard let context = sws_getContext(k.srcWidth, k.srcHeight, AVPixelFormat(rawValue: k.srcFormat),
                                           Int32(k.dstWidth), Int32(k.dstHeight), AVPixelFormat(rawValue: k.dstFormat),
                                           Int32(flags), nil, nil, nil) else { return nil }
        // RGB out: the stream's matrix and range. The same YUV format out: samples kept as they are.
        if k.dstFormat != k.srcFormat {
            let coefficients = sws_getCoefficients(k.colorspace)
            let rgbTable = sws_getCoefficients(SWS_CS_DEFAULT)
            sws_setColorspaceDetails(context, coefficients, k.fullRange ? 1 : 0, rgbTable, 1, 0, 1 << 16, 1 << 16)
        }
        return context
    }

    /// `source` inside the picture, its origin on the chroma grid; the whole picture when nil.
    private static func clamp(_ source: PixelRect?, frame f: UnsafeMutablePointer<AVFrame>,
                              desc: UnsafePointer<AVPixFmtDescriptor>) -> PixelRect {
        let w = Int(f.pointee.width), h = Int(f.pointee.height)
        guard var r = source else { return PixelRect(x: 0, y: 0, width: w, height: h) }
        let mx = (1 << Int(desc.pointee.log2_chroma_w)) - 1, my = (1 << Int(desc.pointee.log2_chroma_h)) - 1
        r.x = max(0, min(r.x, w - 1)) & ~mx
        r.y = max(0, min(r.y, h - 1)) & ~my
        r.width = max(1, min(r.width, w - r.x))
        r.height = max(1, min(r.height, h - r.y))
        return r
    }

    /// The frame's plane pointers moved to `crop`'s top-left corner.
    private static func planes(_ f: UnsafeMutablePointer<AVFrame>, from crop: PixelRect,
                               desc: UnsafePointer<AVPixFmtDescriptor>) -> [UnsafePointer<UInt8>?] {
        var steps: [Int32] = [0, 0, 0, 0]
        av_image_fill_max_pixsteps(&steps, nil, desc)
        let data = withUnsafeBytes(of: f.pointee.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
        let sizes = withUnsafeBytes(of: f.pointee.linesize) { Array($0.bindMemory(to: Int32.self)) }
        return data.enumerated().map { i, plane in
            guard let plane else { return nil }
            guard i < 4 else { return UnsafePointer(plane) }
            let chroma = i == 1 || i == 2
            let sx = chroma ? Int(desc.pointee.log2_chroma_w) : 0, sy = chroma ? Int(desc.pointee.log2_chroma_h) : 0
            return UnsafePointer(plane + (crop.y >> sy) * Int(sizes[i]) + (crop.x >> sx) * Int(steps[i]))
        }
    }

    /// libswscale's name for the frame's colour matrix (unspecified: BT.601, as libswscale and
    /// so ffmpeg assume).
    static func swsColorspace(_ frame: DecodedPicture) -> Int32 {
        switch frame.colorSpace {
        case AVCOL_SPC_BT709: return SWS_CS_ITU709
        case AVCOL_SPC_FCC: return SWS_CS_FCC
        case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M: return SWS_CS_ITU601
        default: return SWS_CS_ITU601
        }
    }
}
