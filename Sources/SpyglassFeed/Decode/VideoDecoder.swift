import CFFmpeg
import SpyglassBitstream
import SpyglassPipeline

/// libavcodec H.264/H.265 decoding in low-delay form.
///
/// - No frame threading (each extra frame thread holds one frame back); `AV_CODEC_FLAG_LOW_DELAY`.
/// - One access unit per packet, Annex B, with its index as the packet pts so frames map back
///   to their access unit's timing.
/// - Empty input is never sent: libavcodec reads an empty packet as end of stream.
/// - Bad data is counted (``Counters/decodeErrors``) and decoding goes on.
public final class VideoDecoder: VideoDecoding {
    /// What the decoder counted.
    public struct Counters: Equatable, Sendable, Codable {
        /// Packets libavcodec refused (`avcodec_send_packet` < 0) or frames it failed on.
        public var decodeErrors = 0
        /// Frames returned.
        public var framesDecoded = 0
        /// Frames returned with libavcodec's error flags set (concealed damage).
        public var concealedFrames = 0
        /// Times the decoder was (re)opened.
        public var opens = 0
    }

    /// Errors opening the decoder.
    public enum DecoderError: Error, CustomStringConvertible {
        case noDecoder(VideoCodec)
        case openFailed(String)
        public var description: String {
            switch self {
            case .noDecoder(let c): return "libavcodec has no \(c.displayName) decoder"
            case .openFailed(let s): return "cannot open decoder: \(s)"
            }
        }
    }

    public let codec: VideoCodec
    public private(set) var counters = Counters()
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let threads: Int
    /// H.264 only: each NAL unit is its own packet (`AV_CODEC_FLAG2_CHUNKS`), so a picture comes
    /// out right after its last slice and earlier slices decode while later ones arrive.
    public let perNAL: Bool
    /// Pictures libavcodec would hold back until a recovered one are shown (``DecoderSettings/showCorrupt``).
    private let showCorrupt: Bool
    private var errorResilience = false
    private var pending: [Int: (FrameTiming, Bool)] = [:]   // AU index → timing, damaged
    private var outputIndex = 0
    /// Parameter sets to put before the next access unit after (re)opening, so that an IDR
    /// without them still decodes.
    private var primeWith: [[UInt8]]?

    /// Sets libavcodec's own logging: `verbose` shows its warnings (concealment, errors);
    /// otherwise it is silent and Spyglass's counters report the damage.
    public static func setLibraryLogging(verbose: Bool) {
        av_log_set_level(verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
    }

    /// Opens a decoder.
    /// - Parameters:
    ///   - codec: H.264 or H.265.
    ///   - threads: slice threads (1 = single thread). Frame threading is never used.
    /// - Throws: ``DecoderError``.
    public convenience init(codec: VideoCodec, threads: Int = 1, perNAL: Bool = false) throws {
        try self.init(settings: DecoderSettings(codec: codec, threads: threads, perNAL: perNAL))
    }

    /// Opens a decoder with `settings` (``DecoderSettings``).
    /// - Throws: ``DecoderError``.
    public init(settings: DecoderSettings) throws {
        codec = settings.codec
        threads = max(1, settings.threads)
        perNAL = settings.perNAL && settings.codec == .h264
        showCorrupt = settings.showCorrupt
        guard let p = av_packet_alloc() else { throw DecoderError.openFailed("out of memory") }
        packet = p
        try open()
    }

    deinit {
        avcodec_free_context(&context)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    private func open() throws {
        avcodec_free_context(&context)
        let id = codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
        guard let dec = avcodec_find_decoder(id) else { throw DecoderError.noDecoder(codec) }
        guard let ctx = avcodec_alloc_context3(dec) else { throw DecoderError.openFailed("out of memory") }
        ctx.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
        if showCorrupt {
            ctx.pointee.flags |= Int32(AV_CODEC_FLAG_OUTPUT_CORRUPT)
            ctx.pointee.flags2 |= Int32(AV_CODEC_FLAG2_SHOW_ALL)
        }
        ctx.pointee.thread_count = Int32(threads)
        ctx.pointee.thread_type = FF_THREAD_SLICE
        var opts: OpaquePointer?
        if perNAL {
            ctx.pointee.flags2 |= Int32(AV_CODEC_FLAG2_CHUNKS)
            // Error resilience would conceal the rest of the picture after every partial packet
            // (about 10x slower); it is switched on only once a loss is seen (noteDamage()).
            av_dict_set(&opts, "enable_er", "0", 0)
        }
        let rc = avcodec_open2(ctx, dec, &opts)
        av_dict_free(&opts)
        errorResilience = false
        guard rc >= 0 else {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw DecoderError.openFailed(Self.errorText(rc))
        }
        context = ctx
        counters.opens += 1
        pending.removeAll()
    }

    /// Closes and reopens the decoder (sender restart, codec reconfiguration), priming it with
    /// `parameterSets` before the next access unit.
    public func reset(parameterSets: [[UInt8]]) throws {
        try open()
        primeWith = parameterSets.isEmpty ? nil : parameterSets
    }

    /// Closes libavcodec's context (its reference pictures and frame pools: about 115 MB for a 4K
    /// HEVC stream) until the next access unit or unit, which reopens it primed with
    /// `parameterSets`. Pictures already handed out keep their own buffers until they go.
    public func release(parameterSets: [[UInt8]]) {
        guard context != nil else { return }
        avcodec_free_context(&context)
        pending.removeAll()
        primeWith = parameterSets.isEmpty ? nil : parameterSets
    }

    /// The open context, reopening it after ``release(parameterSets:)``; nil when that fails
    /// (counted as a decode error).
    private func openContext() -> UnsafeMutablePointer<AVCodecContext>? {
        if context == nil {
            do { try open() } catch { counters.decodeErrors += 1; return nil }
        }
        return context
    }

    /// Primes the next access unit with these parameter sets if it carries none.
    public func prime(with parameterSets: [[UInt8]]) {
        primeWith = parameterSets.isEmpty ? nil : parameterSets
    }

    /// Decodes one access unit.
    /// - Parameters:
    ///   - au: the access unit (must hold a picture; empty ones are refused without a call).
    ///   - emit: called for each frame that comes out now, in output order.
    public func decode(_ au: AccessUnit, emit: (DecodedFrame) -> Void) {
        guard au.byteCount > 0, let ctx = openContext() else { return }
        var prefix: [[UInt8]] = []
        if let p = primeWith {
            if !au.hasParameterSets { prefix = p }
            primeWith = nil
        }
        let bytes = au.annexB(prefix: prefix)
        var timing = FrameTiming()
        timing.firstByteMicros = au.firstByteMicros
        timing.lastByteMicros = au.lastByteMicros
        timing.completeMicros = au.completeMicros
        timing.captureWallMicros = au.captureWallMicros ?? 0
        timing.captureSource = au.captureSource
        timing.completion = au.completion
        timing.decodeStartMicros = MonotonicClock.nowMicros()
        pending[au.index] = (timing, au.damaged)
        if pending.count > 64 {  // frames the decoder never returned (errors): forget the oldest
            for k in pending.keys.sorted().prefix(pending.count - 64) { pending[k] = nil }
        }

        av_packet_unref(packet)
        guard av_new_packet(packet, Int32(bytes.count)) == 0 else { counters.decodeErrors += 1; return }
        bytes.withUnsafeBytes { src in
            packet.pointee.data.update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count)
        }
        packet.pointee.pts = Int64(au.index)
        packet.pointee.dts = Int64(au.index)
        if au.isRandomAccessPoint { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        let rc = avcodec_send_packet(ctx, packet)
        if rc < 0 && rc != spy_averror_eagain() { counters.decodeErrors += 1 }
        receive(ctx, emit: emit)
        // Still pending: held for output order from now on (not decode time).
        if pending[au.index] != nil { pending[au.index]?.0.heldForOrderFromMicros = MonotonicClock.nowMicros() }
    }

    /// Decodes one NAL unit of the access unit `accessUnitIndex` (per-NAL mode).
    /// - Parameters:
    ///   - unit: the NAL unit, as from the scanner.
    ///   - accessUnitIndex: index of the access unit it belongs to (becomes the frame's pts).
    ///   - emit: called for each frame that comes out now.
    ///   - captureWallMicros: an ST 0604 capture stamp this unit (an SEI) carried.
    public func decode(unit: NALUnit, accessUnitIndex: Int, isParameterSet: Bool, captureWallMicros: UInt64? = nil,
                       emit: (DecodedFrame) -> Void) {
        guard !unit.bytes.isEmpty, let ctx = openContext() else { return }
        if primeWith != nil && !isParameterSet {
            let sets = primeWith!
            primeWith = nil
            for p in sets { send(ctx, p, pts: Int64(accessUnitIndex), key: false) }
        } else if isParameterSet {
            primeWith = nil
        }
        let now = MonotonicClock.nowMicros()
        var entry = pending[accessUnitIndex] ?? (FrameTiming(), false)
        if entry.0.firstByteMicros == 0 { entry.0.firstByteMicros = unit.firstByteMicros }
        // Earlier units decode while later ones arrive (off the critical path); the stage that
        // counts is from the last unit handed over to the picture coming out.
        entry.0.decodeStartMicros = now
        entry.0.lastByteMicros = unit.lastByteMicros
        entry.0.completeMicros = unit.lastByteMicros
        entry.0.completion = .perNALUnit
        if let captureWallMicros { entry.0.captureWallMicros = captureWallMicros }
        if unit.damaged { entry.1 = true; noteDamage() }
        pending[accessUnitIndex] = entry
        trimPending()
        send(ctx, unit.bytes, pts: Int64(accessUnitIndex), key: false)
        receive(ctx, emit: emit)
    }

    /// Turns libavcodec's error concealment on after a loss (per-NAL mode keeps it off while clean).
    public func noteDamage() {
        guard perNAL, !errorResilience, let ctx = context else { return }
        av_opt_set(ctx.pointee.priv_data, "enable_er", "1", 0)
        errorResilience = true
    }

    private func send(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ bytes: [UInt8], pts: Int64, key: Bool) {
        av_packet_unref(packet)
        guard av_new_packet(packet, Int32(bytes.count + 4)) == 0 else { counters.decodeErrors += 1; return }
        let start: [UInt8] = [0, 0, 0, 1]
        start.withUnsafeBytes { packet.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 4) }
        bytes.withUnsafeBytes { src in
            (packet.pointee.data + 4).update(from: src.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count)
        }
        packet.pointee.pts = pts
        packet.pointee.dts = pts
        if key { packet.pointee.flags |= AV_PKT_FLAG_KEY }
        let rc = avcodec_send_packet(ctx, packet)
        if rc < 0 && rc != spy_averror_eagain() { counters.decodeErrors += 1 }
    }

    private func trimPending() {
        if pending.count > 64 {
            for k in pending.keys.sorted().prefix(pending.count - 64) { pending[k] = nil }
        }
    }

    /// Drains frames held for reordering at the end of the stream.
    /// - Parameter emit: called for each remaining frame.
    public func drain(emit: (DecodedFrame) -> Void) {
        guard let ctx = context else { return }
        avcodec_send_packet(ctx, nil)
        receive(ctx, emit: emit)
        avcodec_flush_buffers(ctx)
    }

    private func receive(_ ctx: UnsafeMutablePointer<AVCodecContext>, emit: (DecodedFrame) -> Void) {
        while true {
            guard let f = av_frame_alloc() else { return }
            let rc = avcodec_receive_frame(ctx, f)
            if rc < 0 {
                var ff: UnsafeMutablePointer<AVFrame>? = f
                av_frame_free(&ff)
                if rc != spy_averror_eagain() && rc != spy_averror_eof() { counters.decodeErrors += 1 }
                return
            }
            let now = MonotonicClock.nowMicros()
            let auIndex = f.pointee.pts == spy_av_nopts_value() ? -1 : Int(f.pointee.pts)
            var (timing, damaged) = pending.removeValue(forKey: auIndex) ?? (FrameTiming(), false)
            timing.decodeEndMicros = now
            let flagged = f.pointee.decode_error_flags != 0 || (f.pointee.flags & AV_FRAME_FLAG_CORRUPT) != 0
            if flagged { counters.concealedFrames += 1 }
            counters.framesDecoded += 1
            emit(DecodedFrame(picture: DecodedPicture(frame: f), index: outputIndex, accessUnitIndex: auIndex, timing: timing,
                              damaged: damaged || flagged))
            outputIndex += 1
        }
    }

    package static func errorText(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 128)
        spy_av_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
