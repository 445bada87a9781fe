import Foundation
import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif
import SpyglassBitstream
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed

/// Containers in and out of Spyglass's own recording form (an Annex B file and its timing
/// index, which ``RecordingSource`` replays with seeking and speed):
/// - ``recording(of:)`` demuxes a Matroska, MP4/MOV or MPEG-TS file through libavformat, each
///   video packet to Annex B (libavcodec's `h264_mp4toannexb`/`hevc_mp4toannexb`, which also put
///   the parameter sets before each keyframe), timed in decode order by presentation rank
///   (``DecodeOrderTimes``): `spyglass replay
///   FILE.mkv|.mp4|.ts` and `spyglass play FILE.mkv|.mp4`, at the file's own timing;
/// - ``export(_:to:)`` muxes a raw recording into a container with its index's timing
///   (`spyglass export REC.h264 OUT.mkv`).
public enum ContainerImport {
    /// `play FILE` goes through the demuxer for H.264/H.265 in a container libavformat
    /// recognises by its bytes, whatever the name (``FileIdentity``); MPEG-TS stays with
    /// Spyglass's own demuxer.
    public static func playsThrough(_ path: String) -> Bool {
        FileIdentity.of(path) == .container
    }

    /// `replay FILE` goes through the demuxer for these.
    public static func replaysThrough(_ path: String) -> Bool {
        playsThrough(path) || ["ts", "m2ts", "mts"].contains(FilePath.fileExtension(path))
    }

    /// A one-line error.
    public struct ImportError: Error, CustomStringConvertible {
        public let description: String
        init(_ text: String) { description = text }
    }

    /// Writes `input`'s video as a recording in a new temporary folder: `NAME.h264`/`.h265` and
    /// its `.idx`, each access unit at the time of its presentation rank (µs from the first; the file's
    /// `creation_time`, if any, as the wall clock). The caller removes the folder.
    /// - Returns: the stream file's path.
    /// - Throws: ``ImportError`` for a file libavformat cannot read, no H.264/H.265 video, or a
    ///   temporary folder that cannot be written.
    public static func recording(of input: String) throws -> String {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let rc = avformat_open_input(&ctx, input, nil, nil)
        guard rc >= 0, let ctx else { throw ImportError("\(input): \(VideoDecoder.errorText(rc))") }
        defer { var c: UnsafeMutablePointer<AVFormatContext>? = ctx; avformat_close_input(&c) }
        let (v, stream, codec) = try videoStream(of: ctx, input)
        let filter = try AnnexBFilter(codec: codec, stream: stream, input)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("spyglass-import-\(getpid())-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let streamPath = "\(dir)/\(FilePath.stem(input)).\(codec.fileExtension)"
        var done = false
        defer { if !done { try? FileManager.default.removeItem(atPath: dir) } }   // nothing left behind on an error
        let out = try IndexedWriter(streamPath: streamPath)
        try copyVideo(of: ctx, stream: v, timeBase: stream.pointee.time_base, through: filter, into: out, startWall: creationMicros(ctx))
        out.close()
        guard out.entries > 0 else { throw ImportError("\(input): no video packet could be read") }
        if filter.refused > 0 {
            Log.info("\(input): \(filter.refused) damaged video packets dropped (libavcodec's Annex B filter refused them)")
        }
        done = true
        return streamPath
    }

    /// The file's best video stream: its index, the stream, and its codec.
    /// - Throws: ``ImportError`` when the file cannot be read, has no video, or its video is not
    ///   H.264 or H.265.
    private static func videoStream(of ctx: UnsafeMutablePointer<AVFormatContext>, _ input: String) throws
        -> (Int32, UnsafeMutablePointer<AVStream>, VideoCodec) {
        let rc = avformat_find_stream_info(ctx, nil)
        guard rc >= 0 else { throw ImportError("\(input): \(VideoDecoder.errorText(rc))") }
        let v = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard v >= 0, let stream = ctx.pointee.streams[Int(v)] else { throw ImportError("\(input): no video stream") }
        let codecID = stream.pointee.codecpar.pointee.codec_id
        guard codecID == AV_CODEC_ID_H264 || codecID == AV_CODEC_ID_HEVC else {
            throw ImportError("\(input): the video is \(String(cString: avcodec_get_name(codecID))), not H.264 or H.265")
        }
        return (v, stream, codecID == AV_CODEC_ID_HEVC ? .h265 : .h264)
    }

    /// Every packet of stream `v` as Annex B into `out`, in decode order, each at the time of its
    /// presentation rank (``DecodeOrderTimes``), µs from the first and rising, with its own pts
    /// beside (what `replay --from`/`--to` show by); `startWall` (µs since the epoch) plus the
    /// rank's time as its wall clock.
    private static func copyVideo(of ctx: UnsafeMutablePointer<AVFormatContext>, stream v: Int32, timeBase tb: AVRational,
                                  through filter: AnnexBFilter, into out: IndexedWriter, startWall: UInt64?) throws {
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { throw ImportError("out of memory") }
        var times = DecodeOrderTimes<(data: [UInt8], key: Bool, pts: Int64?)>()
        var first: Int64?, last: Int64 = -1
        func write(_ timed: [((data: [UInt8], key: Bool, pts: Int64?), Int64)]) throws {
            for (p, absolute) in timed {
                if first == nil { first = absolute }
                let us = max(absolute - (first ?? absolute), last + 1)
                last = us
                let own = p.pts.map { max(0, $0 - (first ?? $0)) } ?? us
                try out.append(p.data, micros: UInt64(us), presentationMicros: UInt64(own), wallMicros: startWall.map { $0 + UInt64(us) } ?? 0,
                               keyframe: p.key)
            }
        }
        while av_read_frame(ctx, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == v else { continue }
            let pts = packet.pointee.pts != spy_av_nopts_value() ? packet.pointee.pts : packet.pointee.dts
            let us = pts == spy_av_nopts_value() ? nil : av_rescale_q(pts, tb, AVRational(num: 1, den: 1_000_000))
            let key = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            for data in try filter.annexB(packet) { try write(times.push((data, key, us), pts: us)) }
        }
        try write(times.flush())
    }

    /// The container's `creation_time` as µs since the epoch, if it has one.
    static func creationMicros(_ ctx: UnsafeMutablePointer<AVFormatContext>) -> UInt64? {
        guard let e = av_dict_get(ctx.pointee.metadata, "creation_time", nil, 0), let value = e.pointee.value else { return nil }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let text = String(cString: value)
        guard let d = f.date(from: text) ?? ISO8601DateFormatter().date(from: text) else { return nil }
        return UInt64(max(0, d.timeIntervalSince1970) * 1e6)
    }
}

/// libavcodec's `h264_mp4toannexb`/`hevc_mp4toannexb` on one stream's packets: length-prefixed
/// units (MP4, Matroska) become Annex B with the parameter sets before each keyframe; Annex B
/// (MPEG-TS) passes through.
final class AnnexBFilter {
    private var context: UnsafeMutablePointer<AVBSFContext>?

    init(codec: VideoCodec, stream: UnsafeMutablePointer<AVStream>, _ label: String) throws {
        guard let bsf = av_bsf_get_by_name(codec == .h265 ? "hevc_mp4toannexb" : "h264_mp4toannexb"),
              av_bsf_alloc(bsf, &context) >= 0, let context else { throw ContainerImport.ImportError("\(label): libavcodec has no Annex B filter") }
        avcodec_parameters_copy(context.pointee.par_in, stream.pointee.codecpar)
        context.pointee.time_base_in = stream.pointee.time_base
        let rc = av_bsf_init(context)
        guard rc >= 0 else { throw ContainerImport.ImportError("\(label): \(VideoDecoder.errorText(rc))") }
    }

    deinit { av_bsf_free(&context) }

    /// Packets the filter refused or gave nothing for (damaged length prefixes), dropped.
    private(set) var refused = 0

    /// The Annex B access units `packet` gives (its data is taken; usually one).
    func annexB(_ packet: UnsafeMutablePointer<AVPacket>) throws -> [[UInt8]] {
        guard let context else { return [] }
        var out: [[UInt8]] = []
        guard av_bsf_send_packet(context, packet) >= 0 else { refused += 1; return [] }   // a malformed packet is dropped, counted
        while av_bsf_receive_packet(context, packet) >= 0 {
            if let d = packet.pointee.data, packet.pointee.size > 0 { out.append(Array(UnsafeBufferPointer(start: d, count: Int(packet.pointee.size)))) }
            av_packet_unref(packet)
        }
        if out.isEmpty { refused += 1 }
        return out
    }
}

/// Writes a recording's stream file and index as ``Recorder`` does (the index line first, then
/// the bytes, each with one `write(2)`), from access units already cut.
final class IndexedWriter {
    private let stream: Int32, index: Int32, presentation: Int32
    private var offset = 0
    private(set) var entries = 0

    init(streamPath: String) throws {
        stream = open(streamPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        index = open(streamPath + ".idx", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        presentation = open(RecordingSource.presentationPath(for: streamPath), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard stream >= 0, index >= 0, presentation >= 0 else { throw ContainerImport.ImportError("\(streamPath): \(String(cString: strerror(errno)))") }
        _ = writeAll(index, Array(Recorder.header.utf8))
    }

    /// One access unit: at `micros` in decode order (the index's time), presented at
    /// `presentationMicros` (its own pts, in the same time), its bytes.
    func append(_ data: [UInt8], micros: UInt64, presentationMicros: UInt64, wallMicros: UInt64, keyframe: Bool) throws {
        let line = "\(offset),\(data.count),\(micros),\(micros),\(wallMicros),0,\(keyframe ? 1 : 0),0,0\n"
        let pts = Array("\(presentationMicros)\n".utf8)
        let ok = writeAll(index, Array(line.utf8)) == line.utf8.count && writeAll(presentation, pts) == pts.count
            && writeAll(stream, data) == data.count
        guard ok else { throw ContainerImport.ImportError("cannot write the temporary recording: \(String(cString: strerror(errno)))") }
        offset += data.count
        entries += 1
    }

    func close() {
        Glibc.close(stream)
        Glibc.close(index)
        Glibc.close(presentation)
    }
}

extension ContainerImport {
    /// `spyglass export REC.h264 OUT.mkv|.ts|.mp4`: a raw recording (made with `--record
    /// NAME.h264`) into a container through the recorder a live `--record NAME.mkv` uses
    /// (``ContainerRecorder``), each access unit timed as recorded: its capture time where it has
    /// one, else its arrival; B-frames in presentation order (from the picture order count), with
    /// captions; the first picture's time is the file's `creation_time`.
    /// - Returns: the pictures written and the span of their time stamps, seconds.
    /// - Throws: ``ImportError`` for a recording with no index or no keyframe, an output name
    ///   that is not `.mkv`, `.ts` or `.mp4`, or a write error.
    public static func export(_ streamPath: String, to output: String) throws -> (pictures: Int, seconds: Double, dropped: Int) {
        guard ContainerWriter.Container(rawValue: FilePath.fileExtension(output)) != nil else {
            throw ImportError("\(output): name the container with .mkv, .ts or .mp4")
        }
        guard recordsRawStream(streamPath) else {
            throw ImportError("\(streamPath): export takes a raw recording (--record NAME.h264 or .h265, with its .idx)")
        }
        guard FileManager.default.fileExists(atPath: streamPath) else { throw ImportError("\(streamPath): no such file") }
        guard let idx = RecordingIndex.load(streamPath: streamPath), !idx.entries.isEmpty else {
            throw ImportError("\(streamPath): no recording index (\(streamPath).idx) with an access unit in it")
        }
        guard let file = FileHandle(forReadingAtPath: streamPath) else { throw ImportError("\(streamPath): cannot be read") }
        defer { try? file.close() }
        guard let firstKey = idx.entries.firstIndex(where: \.keyframe) else { throw ImportError("\(streamPath): no keyframe to start from") }
        // Never over an earlier file (an earlier flight's export), and one line for a folder that is not there.
        guard !FileManager.default.fileExists(atPath: output) else { throw ImportError("\(output) exists: give a new name (nothing was written)") }
        let folder = FilePath.folder(output)
        guard access(folder.isEmpty ? "." : folder, W_OK) == 0 else { throw ImportError("\(output): folder '\(folder.isEmpty ? "." : folder)' \(errnoText())") }
        let entries = Array(idx.entries[firstKey...])
        let recorder = ContainerRecorder(path: output)
        var assembler = AccessUnitAssembler(codec: streamPath.lowercased().hasSuffix(".h265") ? .h265 : .h264)
        for e in entries {
            try file.seek(toOffset: UInt64(e.offset))
            for au in accessUnits([UInt8](try file.read(upToCount: e.size) ?? Data()), of: e, assembler: &assembler) {
                recorder.record(au, store: assembler.parameterSets, wallMicros: e.wallMicros)
            }
        }
        recorder.close()
        if let error = recorder.error { throw ImportError(error) }
        let stamp = { (e: RecordingIndex.Entry) -> UInt64 in e.captureWallMicros > 0 ? e.captureWallMicros : e.firstByteMicros }
        let span = entries.map(stamp).max().map { $0 > stamp(entries[0]) ? Double($0 - stamp(entries[0])) / 1e6 : 0 } ?? 0
        return (recorder.accessUnits, span, idx.repaired)
    }

    /// The access unit of one index entry, timed as when it was recorded: its first and last
    /// byte's arrival (monotonic µs) and its capture time (µs since the epoch), so that the
    /// recorder stamps it as it did live.
    private static func accessUnits(_ bytes: [UInt8], of e: RecordingIndex.Entry, assembler: inout AccessUnitAssembler) -> [AccessUnit] {
        var aus: [AccessUnit] = []
        var scanner = AnnexBScanner()
        scanner.push(bytes, arrivalMicros: e.firstByteMicros) { if let au = assembler.push($0) { aus.append(au) } }
        scanner.flush(atMicros: e.lastByteMicros, reason: .endOfStream) { if let au = assembler.push($0) { aus.append(au) } }
        if let au = assembler.flush(atMicros: e.lastByteMicros, reason: .endOfStream) { aus.append(au) }
        return aus.map { au in
            var au = au
            au.firstByteMicros = e.firstByteMicros
            au.lastByteMicros = e.lastByteMicros
            au.captureWallMicros = e.captureWallMicros > 0 ? e.captureWallMicros : nil
            return au
        }
    }
}

extension ContainerImport {
    /// `spyglass repair FILE` and `spyglass export REC.h264 OUT.EXT`: runs one, returns the line
    /// to print. - Throws: ``ImportError`` for wrong arguments and what the command throws.
    public static func command(_ name: String, _ argv: [String]) throws -> String {
        let usage = name == "repair"
            ? "usage: spyglass repair RECORDING.mkv|.mp4|.ts\n\nA recording that a crash, kill -9 or power loss cut short, remuxed whole into\nRECORDING.repaired.EXT beside it (Matroska's Cues, the duration): players seek in it again."
            : "usage: spyglass export RECORDING.h264|.h265 OUT.mkv|.ts|.mp4\n\nA raw recording (--record NAME.h264, with its .idx) into a container, each picture at\nits capture time (else its arrival), with a caption track."
        if argv.contains("--help") || argv.contains("-h") { return usage }
        VideoDecoder.setLibraryLogging(verbose: false)   // libav's own lines: its errors come back as ours
        guard !argv.contains(where: { $0.hasPrefix("-") }) else { throw ImportError("\(name) takes no options (spyglass \(name) --help)") }
        if name == "repair" {
            guard argv.count == 1 else { throw ImportError("repair takes one recording: spyglass repair FILE.mkv|.mp4|.ts") }
            guard ["mkv", "mp4", "mov", "ts"].contains(FilePath.fileExtension(argv[0])) else {
                throw ImportError("\(argv[0]): repair takes a container (.mkv, .mp4, .ts); a raw .h264/.h265 recording is kept whole by its index")
            }
            let r = try ContainerRepair.repair(argv[0])
            let index = FilePath.fileExtension(argv[0]) == "mkv" ? "its index (Cues)" : "its index"
            return String(format: "%@: %d pictures, %.1f s, with %@ and duration", r.path, r.packets, r.seconds, index)
        }
        guard argv.count == 2 else { throw ImportError("export takes a recording and a file: spyglass export REC.h264 OUT.mkv|.ts|.mp4") }
        let r = try export(argv[0], to: argv[1])
        return String(format: "%@: %d pictures, %.1f s", argv[1], r.pictures, r.seconds)
            + (r.dropped > 0 ? " (\(r.dropped) torn or incomplete index entries dropped, as replay drops them)" : "")
    }
}
