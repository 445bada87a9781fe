import Foundation
import CFFmpeg
import SpyglassBitstream
import SpyglassIngest

/// One container file of one H.264/H.265 video stream, muxed by libavformat: what
/// ``ContainerRecorder`` writes live and `spyglass export` writes from a raw recording.
///
/// Access units go in as Annex B with time stamps in µs from the file's start; the Matroska and
/// MP4 muxers turn the Annex B extradata into avcC/hvcC and each packet into length-prefixed
/// units. Matroska: clusters of at most 1 s (`cluster_time_limit`), CRC-32; MP4: fragmented
/// (`frag_keyframe+frag_custom+empty_moov+default_base_moof`), a fragment at each keyframe and
/// after 1 s at the next picture presented when decoded (``write(_:ptsMicros:dtsMicros:keyframe:)``),
/// each access unit muxed when the next one's dts gives its duration;
/// every packet is flushed to the kernel once the muxer lets go of it (`flush_packets`).
///
/// Matroska and MP4 also get a text track, one cue per picture (``writeCaption(_:micros:durationMicros:)``),
/// which any player shows as subtitles, as DJI's and QGroundControl's recordings carry: Matroska
/// `S_TEXT/UTF8` (SubRip), MP4 `tx3g` (3GPP timed text). MPEG-TS has none.
package final class ContainerWriter {
    /// The containers, by file extension.
    package enum Container: String, CaseIterable {
        case matroska = "mkv", mpegts = "ts", mp4 = "mp4"
        var muxer: String { self == .matroska ? "matroska" : self == .mpegts ? "mpegts" : "mp4" }
        var name: String { self == .matroska ? "Matroska" : self == .mpegts ? "MPEG-TS" : "fragmented MP4" }
    }

    let path: String
    private let format: UnsafeMutablePointer<AVFormatContext>
    private let stream: UnsafeMutablePointer<AVStream>
    /// The text track (nil in MPEG-TS).
    private let captions: UnsafeMutablePointer<AVStream>?
    /// MPEG-TS: the KLV data stream (MISB ST 0601 local sets; stream type 0x15), when the stream
    /// carried KLV before the file began.
    private let klv: UnsafeMutablePointer<AVStream>?
    private var lastKLVTick: Int64 = -1
    private var lastCaptionTick: Int64 = -1
    /// The last time stamp written, in the stream's time base.
    private var lastTick: Int64 = -1
    /// MP4: the dts (µs) where the open fragment began; nil before the first packet.
    private var fragmentStartMicros: Int64?
    /// MP4: the access unit not yet muxed (``writeHeld(durationMicros:)``), and the last duration.
    private var held: (data: [UInt8], pts: Int64, dts: Int64, keyframe: Bool)?
    private var lastDurationMicros: Int64 = 33_333
    private let cutsFragments: Bool

    /// Creates `path` and writes the container's header.
    /// - Parameters:
    ///   - container: the format.
    ///   - codec, width, height: the stream's (pixels, from its SPS).
    ///   - parameterSets: VPS/SPS/PPS units (headers included), the file's extradata.
    ///   - startWallMicros: the file's start, µs since the epoch (`creation_time`).
    /// - Throws: a one-line ``SourceError/open(_:)`` naming libavformat's or the system's error.
    ///   - withKLV: MPEG-TS only: a KLV data stream for ``writeKLV(_:micros:)``.
    package init(path: String, container: Container, codec: VideoCodec, width: Int, height: Int, parameterSets: [[UInt8]],
         startWallMicros: UInt64, withKLV: Bool = false) throws {
        self.path = path
        cutsFragments = container == .mp4
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&ctx, nil, container.muxer, path) >= 0, let ctx else {
            throw SourceError.open("\(path): libavformat has no \(container.muxer) muxer")
        }
        format = ctx
        guard let s = avformat_new_stream(ctx, nil) else { avformat_free_context(ctx); throw SourceError.open("\(path): out of memory") }
        stream = s
        let par = s.pointee.codecpar!
        par.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        par.pointee.codec_id = codec == .h265 ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264
        // MP4 H.265 as Apple's players want it: `hvc1` (parameter sets in the sample entry only).
        if container == .mp4 && codec == .h265 { par.pointee.codec_tag = 0x3163_7668 }   // 'hvc1'
        par.pointee.width = Int32(width)
        par.pointee.height = Int32(height)
        let extra = parameterSets.reduce(into: [UInt8]()) { $0 += [0, 0, 0, 1] + $1 }
        if !extra.isEmpty, let buf = av_mallocz(extra.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) {
            extra.withUnsafeBytes { _ = memcpy(buf, $0.baseAddress!, extra.count) }
            par.pointee.extradata = buf.assumingMemoryBound(to: UInt8.self)
            par.pointee.extradata_size = Int32(extra.count)
        }
        s.pointee.time_base = AVRational(num: 1, den: 1_000_000)
        if container != .mpegts, let t = avformat_new_stream(ctx, nil) {
            t.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_SUBTITLE
            t.pointee.codecpar.pointee.codec_id = container == .mp4 ? AV_CODEC_ID_MOV_TEXT : AV_CODEC_ID_SUBRIP
            t.pointee.time_base = AVRational(num: 1, den: 1_000_000)
            av_dict_set(&t.pointee.metadata, "title", "Spyglass: capture time and latency", 0)
            captions = t
        } else {
            captions = nil
        }
        if container == .mpegts && withKLV, let k = avformat_new_stream(ctx, nil) {
            k.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_DATA
            k.pointee.codecpar.pointee.codec_id = AV_CODEC_ID_SMPTE_KLV
            k.pointee.time_base = AVRational(num: 1, den: 1_000_000)
            klv = k
        } else {
            klv = nil
        }
        av_dict_set(&ctx.pointee.metadata, "creation_time", Self.iso8601(startWallMicros), 0)
        ctx.pointee.flush_packets = 1
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        switch container {
        case .matroska: av_dict_set(&options, "cluster_time_limit", "1000", 0)
        case .mp4:
            av_dict_set(&options, "movflags", "frag_keyframe+frag_custom+empty_moov+default_base_moof", 0)
        case .mpegts: break
        }
        var rc = avio_open(&ctx.pointee.pb, path, AVIO_FLAG_WRITE)
        guard rc >= 0 else { avformat_free_context(ctx); throw SourceError.open("\(path): \(VideoDecoder.errorText(rc))") }
        rc = avformat_write_header(ctx, &options)
        guard rc >= 0 else {
            avio_closep(&ctx.pointee.pb)
            avformat_free_context(ctx)
            throw SourceError.open("\(path): libavformat: \(VideoDecoder.errorText(rc))")
        }
    }

    /// Muxes one access unit (Annex B), in decode order, presented at `ptsMicros` and decoded at
    /// `dtsMicros` from the file's start (``PresentationStamper``). In the stream's time base a
    /// dts that would not rise is put one tick after the one before, and a pts before its dts at
    /// the dts: libavformat refuses both.
    /// - Throws: ``SourceError/open(_:)`` with libavformat's error (a full disk, …).
    package func write(_ data: [UInt8], ptsMicros: Int64, dtsMicros: Int64, keyframe: Bool) throws {
        guard cutsFragments else {
            return try mux(data, on: stream, micros: dtsMicros, last: &lastTick, keyframe: keyframe, ptsMicros: ptsMicros)
        }
        if let held {
            lastDurationMicros = max(1, dtsMicros - held.dts)
            try writeHeld(durationMicros: lastDurationMicros)
        }
        try cutFragment(before: dtsMicros, presentedAtDecode: ptsMicros <= dtsMicros, keyframe: keyframe)
        held = (data, ptsMicros, dtsMicros, keyframe)
    }

    /// MP4: the access unit held until the next one's dts gives its duration. A fragment's last
    /// sample is written with the duration its packet carries, and libavformat moves the next
    /// fragment's first sample to where that duration ends (movenc.c: "adjust the dts of this
    /// packet to be what the previous packets duration implies"): with a guessed duration the
    /// first picture of each fragment was off by the difference (3 ms on a jittery link).
    private func writeHeld(durationMicros: Int64) throws {
        guard let h = held else { return }
        held = nil
        try mux(h.data, on: stream, micros: h.dts, last: &lastTick, keyframe: h.keyframe, durationMicros: durationMicros, ptsMicros: h.pts)
    }

    /// MP4: a fragment 1 s (what a `kill -9` may lose) after the last one begins, at the next
    /// picture presented when it is decoded; libavformat itself cuts at each keyframe
    /// (`frag_keyframe`). Its cut by duration (`frag_duration`) wrote the first picture of the new
    /// fragment with no composition offset: a B-frame stream's P-picture there was shown before
    /// the B-pictures it follows. A picture whose pts is its dts has no offset to lose.
    private func cutFragment(before dtsMicros: Int64, presentedAtDecode: Bool, keyframe: Bool) throws {
        guard let start = fragmentStartMicros, !keyframe else { fragmentStartMicros = dtsMicros; return }
        guard presentedAtDecode && dtsMicros - start >= 1_000_000 else { return }
        let rc = av_write_frame(format, nil)
        guard rc >= 0 else { throw SourceError.open("\(path): libavformat: \(VideoDecoder.errorText(rc))") }
        fragmentStartMicros = dtsMicros
    }

    /// One text cue on the text track (none in MPEG-TS), from `micros` for `durationMicros`.
    /// - Throws: ``SourceError/open(_:)`` with libavformat's error.
    package func writeCaption(_ text: String, micros: Int64, durationMicros: Int64) throws {
        guard let captions else { return }
        let utf8 = Array(text.utf8.prefix(4000))
        // 3GPP timed text: a 16-bit length, then the text (3GPP TS 26.245 §5.17); SubRip: the text.
        let data = captions.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_MOV_TEXT ? [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)] + utf8 : utf8
        try mux(data, on: captions, micros: micros, last: &lastCaptionTick, durationMicros: durationMicros)
    }

    /// One KLV packet (a MISB ST 0601 local set, SMPTE ST 336 coded) on the KLV data stream at
    /// `micros`, with the picture of that time; nothing without a KLV stream.
    /// - Throws: ``SourceError/open(_:)`` with libavformat's error.
    package func writeKLV(_ data: [UInt8], micros: Int64) throws {
        guard let klv, !data.isEmpty else { return }
        try mux(data, on: klv, micros: micros, last: &lastKLVTick)
    }

    /// One packet on `stream` decoded at `micros` from the file's start (and presented then, or at
    /// `ptsMicros`), in the stream's time base (the muxer's: 1 ms in Matroska, 90 kHz in
    /// MPEG-TS); a stamp that would not come after the stream's `last` (two that round to one
    /// tick) is put one tick after it, and a pts before the dts at the dts.
    private func mux(_ data: [UInt8], on s: UnsafeMutablePointer<AVStream>, micros: Int64, last: inout Int64,
                     keyframe: Bool = false, durationMicros: Int64? = nil, ptsMicros: Int64? = nil) throws {
        guard let packet = av_packet_alloc() else { throw SourceError.open("\(path): out of memory") }
        defer { var p: UnsafeMutablePointer<AVPacket>? = packet; av_packet_free(&p) }
        guard av_new_packet(packet, Int32(data.count)) == 0 else { throw SourceError.open("\(path): out of memory") }
        data.withUnsafeBytes { _ = memcpy(packet.pointee.data, $0.baseAddress!, data.count) }
        let tb = s.pointee.time_base, us = AVRational(num: 1, den: 1_000_000)
        let tick = max(av_rescale_q(micros, us, tb), last + 1)
        last = tick
        packet.pointee.dts = tick
        packet.pointee.pts = max(tick, ptsMicros.map { av_rescale_q($0, us, tb) } ?? tick)
        if let d = durationMicros { packet.pointee.duration = max(1, av_rescale_q(d, us, tb)) }
        packet.pointee.stream_index = s.pointee.index
        if keyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        let rc = av_write_frame(format, packet)
        guard rc >= 0 else { throw SourceError.open("\(path): libavformat: \(VideoDecoder.errorText(rc))") }
    }

    /// Writes the trailer (Matroska's Cues and duration, the last fragment) when `complete`, and
    /// closes the file.
    package func close(complete: Bool = true) {
        if complete {
            try? writeHeld(durationMicros: lastDurationMicros)
            av_write_trailer(format)
        }
        avio_closep(&format.pointee.pb)
        avformat_free_context(format)
    }

    /// A picture's caption: its capture time (else its arrival), UTC to the millisecond, and the
    /// time from capture to arrival where the capture time is known
    /// (`2026-12-04 20:31:05.123 UTC · capture to arrival 34 ms`); a capture after its arrival
    /// (or a minute before it) is a sender clock that is not ours: "(sender's clock)", no figure.
    /// - Parameter position: the platform's position (KLV), appended when given.
    package static func caption(captureWallMicros: UInt64?, arrivalWallMicros: UInt64, position: String? = nil) -> String {
        let text = captionTime(captureWallMicros: captureWallMicros, arrivalWallMicros: arrivalWallMicros)
        return position.map { text + " · " + $0 } ?? text
    }

    private static func captionTime(captureWallMicros: UInt64?, arrivalWallMicros: UInt64) -> String {
        let t = captureWallMicros ?? arrivalWallMicros
        var time = time_t(t / 1_000_000)
        var tm = tm()
        gmtime_r(&time, &tm)
        let when = String(format: "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                          tm.tm_hour, tm.tm_min, tm.tm_sec, Int(t % 1_000_000) / 1000)
        guard let c = captureWallMicros else { return when + " (arrival)" }
        let ms = (Double(arrivalWallMicros) - Double(c)) / 1000
        return ms >= 0 && ms < 60_000 ? when + String(format: " · capture to arrival %.0f ms", ms) : when + " (sender's clock)"
    }

    /// `2026-12-04T19:34:53.000000Z`.
    static func iso8601(_ micros: UInt64) -> String {
        var t = time_t(micros / 1_000_000)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                      tm.tm_hour, tm.tm_min, tm.tm_sec, Int(micros % 1_000_000))
    }
}
