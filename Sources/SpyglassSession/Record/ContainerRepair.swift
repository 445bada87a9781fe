import Foundation
import CFFmpeg
import SpyglassFeed

/// `spyglass repair FILE.mkv|.mp4|.ts`: a recording that a crash, a kill or a power loss cut
/// short lacks its end (Matroska's Cues and duration, an MP4's last fragment index): players
/// play it but cannot seek in it. Remuxing it through libavformat (its demuxer, then its muxer,
/// packet by packet, nothing decoded) writes a whole file beside it, `NAME.repaired.EXT`. The
/// original stays as it was: a damaged tail that the demuxer stops at is not lost.
public enum ContainerRepair {
    /// What a repair wrote.
    public struct Result: Sendable {
        /// The new file.
        public var path: String
        /// Video packets copied, and the span of their time stamps, seconds.
        public var packets: Int
        public var seconds: Double
    }

    /// The repaired file's name: `NAME.repaired.EXT` beside `path`.
    public static func outputPath(for path: String) -> String {
        let ext = FilePath.fileExtension(path)
        return ext.isEmpty ? path + ".repaired.mkv" : String(path.dropLast(ext.count + 1)) + ".repaired." + ext
    }

    /// Remuxes `input` into ``outputPath(for:)``: every stream, every packet the demuxer reads,
    /// with its time stamps; the start time (`creation_time`) and other tags kept.
    /// - Throws: ``SourceError``-style text in an `NSError`-free ``RepairError`` when the file
    ///   cannot be opened or read as a container, or the new one cannot be written.
    public static func repair(_ input: String) throws -> Result {
        VideoDecoder.setLibraryLogging(verbose: false)   // its errors come back as ours, in one line
        let output = outputPath(for: input)
        var inCtx: UnsafeMutablePointer<AVFormatContext>?
        var rc = avformat_open_input(&inCtx, input, nil, nil)
        guard rc >= 0, let inCtx else { throw RepairError("\(input): \(VideoDecoder.errorText(rc))") }
        defer { var c: UnsafeMutablePointer<AVFormatContext>? = inCtx; avformat_close_input(&c) }
        rc = avformat_find_stream_info(inCtx, nil)
        guard rc >= 0 else { throw RepairError("\(input): \(VideoDecoder.errorText(rc))") }
        var outCtx: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&outCtx, nil, nil, output) >= 0, let outCtx else {
            throw RepairError("\(output): libavformat has no muxer for this name")
        }
        defer { avio_closep(&outCtx.pointee.pb); avformat_free_context(outCtx) }
        av_dict_copy(&outCtx.pointee.metadata, inCtx.pointee.metadata, 0)
        var video = -1
        for i in 0..<Int(inCtx.pointee.nb_streams) {
            let src = inCtx.pointee.streams[i]!
            guard let dst = avformat_new_stream(outCtx, nil) else { throw RepairError("out of memory") }
            avcodec_parameters_copy(dst.pointee.codecpar, src.pointee.codecpar)
            dst.pointee.codecpar.pointee.codec_tag = 0
            dst.pointee.time_base = src.pointee.time_base
            if video < 0 && src.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO { video = i }
        }
        rc = avio_open(&outCtx.pointee.pb, output, AVIO_FLAG_WRITE)
        guard rc >= 0 else { throw RepairError("\(output): \(VideoDecoder.errorText(rc))") }
        rc = avformat_write_header(outCtx, nil)
        guard rc >= 0 else { throw RepairError("\(output): \(VideoDecoder.errorText(rc))") }
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { throw RepairError("out of memory") }
        var count = 0
        var first: Double?, last = 0.0
        while av_read_frame(inCtx, packet) >= 0 {
            let i = Int(packet.pointee.stream_index)
            let inTB = inCtx.pointee.streams[i]!.pointee.time_base
            if i == video {
                count += 1
                if packet.pointee.pts != spy_av_nopts_value() {
                    let t = Double(packet.pointee.pts) * av_q2d(inTB)
                    first = first ?? t
                    last = max(last, t)
                }
            }
            av_packet_rescale_ts(packet, inTB, outCtx.pointee.streams[i]!.pointee.time_base)
            packet.pointee.pos = -1
            rc = av_interleaved_write_frame(outCtx, packet)   // takes the packet's data
            guard rc >= 0 else { throw RepairError("\(output): \(VideoDecoder.errorText(rc))") }
        }
        rc = av_write_trailer(outCtx)
        guard rc >= 0 else { throw RepairError("\(output): \(VideoDecoder.errorText(rc))") }
        return Result(path: output, packets: count, seconds: last - (first ?? last))
    }

    /// Why a repair failed, in one line.
    public struct RepairError: Error, CustomStringConvertible {
        public let description: String
        init(_ text: String) { description = text }
    }
}
