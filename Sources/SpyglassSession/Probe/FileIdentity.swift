import Foundation
import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif
import SpyglassIngest
import SpyglassFeed

/// What a file given to `play`, `probe` or `replay` is, by libavformat's probe of its first
/// 64 KiB (`av_probe_input_format3`) in front of Spyglass's own detection:
/// - ``ours``: a raw H.264/H.265 byte stream, MPEG-TS, a packet capture, a pipe or device, or
///   anything libavformat does not recognise with confidence (score < 25 of 100): Spyglass's
///   own detection decides, with its own counts of what it drops;
/// - ``container``: H.264 or H.265 video in a container libavformat demuxes (Matroska, MP4,
///   MOV, FLV, AVI, …): played through ``ContainerImport`` at the file's time stamps;
/// - ``unsupported(_:)``: anything else, with one line naming it ("a JPEG image", "VP8 in WebM")
///   and that Spyglass decodes H.264 and H.265 only.
public enum FileIdentity: Equatable, Sendable {
    case ours
    case container
    case unsupported(String)

    /// Media formats libavformat names that are taken at its word (containers, elementary video
    /// and audio, images); anything else (Spyglass's own formats, text, playlists, SDP: opening
    /// those could reach for the network) is left to Spyglass's own detection.
    static let mediaFormats: Set<String> = ["matroska,webm", "mov,mp4,m4a,3gp,3g2,mj2", "avi", "flv", "mpeg", "mpegvideo", "ogg",
                                            "ivf", "asf", "mxf", "nut", "rm", "mp3", "aac", "wav", "flac", "m4v", "obu", "gif"]

    /// Identifies `path` (see the type). Reads at most 64 KiB, then opens the file with
    /// libavformat only when the probe named a format that is not one of Spyglass's own.
    public static func of(_ path: String) -> FileIdentity {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, !PcapSource.isPacketCapture(path) else { return .ours }
        // libavformat's own complaints ("moov atom not found") are for --verbose: the verdict says it.
        let level = av_log_get_level()
        av_log_set_level(AV_LOG_QUIET)
        defer { av_log_set_level(level) }
        guard let format = probe(path),
              mediaFormats.contains(format.name) || format.name.hasSuffix("_pipe") || format.name == "image2" else { return .ours }
        return streams(path, format: format)
    }

    /// libavformat's best guess for the file's first 64 KiB: its format and score (0…100).
    private static func probe(_ path: String) -> (name: String, longName: String, score: Int32, format: UnsafePointer<AVInputFormat>)? {
        guard let h = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? h.close() }
        let head = [UInt8]((try? h.read(upToCount: 1 << 16)) ?? Data())
        guard !head.isEmpty else { return nil }
        var buffer = head + [UInt8](repeating: 0, count: Int(AVPROBE_PADDING_SIZE))
        var score: Int32 = 0
        let found: UnsafePointer<AVInputFormat>? = path.withCString { name in
            buffer.withUnsafeMutableBufferPointer { b in
                var pd = AVProbeData(filename: name, buf: b.baseAddress, buf_size: Int32(head.count), mime_type: nil)
                return av_probe_input_format3(&pd, 1, &score)
            }
        }
        guard let found, score >= AVPROBE_SCORE_MAX / 4 else { return nil }
        return (String(cString: found.pointee.name), found.pointee.long_name.map { String(cString: $0) } ?? "", score, found)
    }

    /// Opens the file as `format` and judges its best video stream.
    private static func streams(_ path: String, format: (name: String, longName: String, score: Int32, format: UnsafePointer<AVInputFormat>)) -> FileIdentity {
        let what = containerName(format.name, longName: format.longName, path: path)
        if format.name.hasSuffix("_pipe") || format.name == "image2" {
            return .unsupported("\(path): \(imageName(format.name, path: path)): Spyglass decodes H.264 and H.265 video only")
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&ctx, path, format.format, nil) >= 0, let ctx else { return .ours }
        defer { var c: UnsafeMutablePointer<AVFormatContext>? = ctx; avformat_close_input(&c) }
        guard avformat_find_stream_info(ctx, nil) >= 0 else { return .ours }
        let v = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard v >= 0, let stream = ctx.pointee.streams[Int(v)] else {
            // Only a confident probe is taken at its word: junk can look like a little MP3.
            guard format.score >= AVPROBE_SCORE_MAX / 2 else { return .ours }
            return .unsupported("\(path): \(what) with no video: Spyglass decodes H.264 and H.265 video only")
        }
        let id = stream.pointee.codecpar.pointee.codec_id
        if id == AV_CODEC_ID_H264 || id == AV_CODEC_ID_HEVC { return .container }
        if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 || id == AV_CODEC_ID_MJPEG && ctx.pointee.nb_streams == 1 {
            return .unsupported("\(path): a JPEG image: Spyglass decodes H.264 and H.265 video only")
        }
        return .unsupported("\(path): \(codecName(id)) in \(what): Spyglass decodes H.264 and H.265 video only")
    }

    /// "VP8", "MPEG-2 video", … (libavcodec's short name for the rest).
    static func codecName(_ id: AVCodecID) -> String {
        let names: [String: String] = ["vp8": "VP8", "vp9": "VP9", "av1": "AV1", "mpeg2video": "MPEG-2 video",
                                       "mpeg1video": "MPEG-1 video", "mpeg4": "MPEG-4 Part 2 video", "theora": "Theora",
                                       "prores": "ProRes", "mjpeg": "Motion JPEG", "h263": "H.263", "wmv3": "WMV 9", "vvc": "H.266"]
        let name = String(cString: avcodec_get_name(id))
        return names[name] ?? name.uppercased()
    }

    /// "WebM", "Matroska", "MP4", "an MPEG program stream", … (libavformat's long name for the rest).
    static func containerName(_ name: String, longName: String, path: String) -> String {
        let ext = FilePath.fileExtension(path)
        switch name {
        case "matroska,webm": return ext == "webm" ? "WebM" : "Matroska"
        case "mov,mp4,m4a,3gp,3g2,mj2": return ext == "mov" ? "QuickTime MOV" : "MP4"
        case "mpeg": return "an MPEG program stream"
        case "mpegvideo": return "a raw MPEG video stream"
        case "avi": return "AVI"
        case "flv": return "FLV"
        case "ogg": return "Ogg"
        case "ivf": return "IVF"
        default: return longName.isEmpty ? name : longName
        }
    }

    /// "a JPEG image", "a PNG image", … from an image format's name (`jpeg_pipe`, `image2`).
    static func imageName(_ name: String, path: String) -> String {
        let kind = name == "image2" ? FilePath.fileExtension(path) : String(name.dropLast("_pipe".count))
        let pretty = ["jpeg": "JPEG", "jpg": "JPEG", "png": "PNG", "bmp": "BMP", "gif": "GIF", "webp": "WebP", "tiff": "TIFF"][kind] ?? kind.uppercased()
        return "a \(pretty) image"
    }
}
