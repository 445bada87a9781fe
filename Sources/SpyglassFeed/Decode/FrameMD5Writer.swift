import CFFmpeg
import Foundation

/// Writes one line per decoded frame in the format of `ffmpeg -f framemd5`:
/// `0, pts, pts, 1, size, md5` where size and md5 are over the frame packed with no padding
/// (`av_image_copy_to_buffer`, align 1), exactly as ffmpeg's rawvideo encoder packs it.
/// The hash and size columns equal ffmpeg's for the same input; pts counts frames from 0.
public final class FrameMD5Writer {
    private let file: OutputFile
    private var buffer: [UInt8] = []
    private var headerWritten = false
    /// Lines written.
    public private(set) var count = 0
    /// True once a write failed (full disk, closed descriptor).
    public var writeFailed: Bool { file.failed }

    /// Where it writes.
    public let path: String

    /// Creates or truncates `path`. Throws when the file cannot be created.
    public init(path: String) throws {
        self.path = path
        file = try OutputFile(path: path)
    }

    /// The `(size, md5 hex)` of a frame packed as ffmpeg packs it.
    public static func hash(_ f: DecodedFrame) -> (size: Int, md5: String) {
        var buffer: [UInt8] = []
        return hash(f, scratch: &buffer)
    }

    static func hash(_ f: DecodedFrame, scratch buffer: inout [UInt8]) -> (size: Int, md5: String) {
        let frame = f.frame
        let fmt = f.pixelFormat
        let size = Int(av_image_get_buffer_size(fmt, frame.pointee.width, frame.pointee.height, 1))
        guard size > 0 else { return (0, String(repeating: "0", count: 32)) }
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
        var digest = [UInt8](repeating: 0, count: 16)
        buffer.withUnsafeMutableBufferPointer { dst in
            withUnsafePointer(to: frame.pointee.data) { dataTuple in
                withUnsafePointer(to: frame.pointee.linesize) { sizeTuple in
                    dataTuple.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                        sizeTuple.withMemoryRebound(to: Int32.self, capacity: 8) { lines in
                            _ = av_image_copy_to_buffer(dst.baseAddress, Int32(size), data, lines, fmt,
                                                        frame.pointee.width, frame.pointee.height, 1)
                        }
                    }
                }
            }
            av_md5_sum(&digest, dst.baseAddress, Int(size))
        }
        return (size, digest.map { String(format: "%02x", $0) }.joined())
    }

    /// Appends the line for `frame`.
    /// Where each recent line began: its access unit, file offset and frame number.
    private var marks: [(accessUnit: Int, offset: Int, count: Int)] = []

    /// Takes back the lines of access unit `index` and every line written after them (a repair
    /// re-decodes those access units and writes their final pictures again).
    /// - Returns: false when the file cannot be cut back (a pipe), or the lines are too old.
    public func rewind(toAccessUnit index: Int) -> Bool {
        guard let i = marks.firstIndex(where: { $0.accessUnit >= index }) else { return true }
        guard file.truncate(to: marks[i].offset) else { return false }
        count = marks[i].count
        marks.removeSubrange(i...)
        return true
    }

    public func write(_ frame: DecodedFrame) {
        if !headerWritten {
            let header = """
            #format: frame checksums
            #version: 2
            #hash: MD5
            #tb 0: 1/1
            #media_type 0: video
            #codec_id 0: rawvideo
            #dimensions 0: \(frame.width)x\(frame.height)
            #sar 0: \(frame.sampleAspectRatio.0)/\(frame.sampleAspectRatio.1)
            #stream#, dts,        pts, duration,     size, hash

            """
            put(header)
            headerWritten = true
        }
        if marks.count >= 8192 { marks.removeFirst(4096) }
        marks.append((frame.accessUnitIndex, file.offset, count))
        let (size, md5) = Self.hash(frame, scratch: &buffer)
        let line = String(format: "0, %10d, %10d, %8d, %8d, ", count, count, 1, size) + md5 + "\n"
        put(line)
        count += 1
    }

    private func put(_ text: String) { file.write(text) }

    /// Closes the file.
    public func close() { file.close() }
}
