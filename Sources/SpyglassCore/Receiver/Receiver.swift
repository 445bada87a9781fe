import Foundation

/// The receive path on one thread: source → depacketizer (Annex B scanner, or RTP) → codec
/// detection → access-unit assembler → (pacer, for files) → libavcodec → frame sink.
///
/// ``run(sink:)`` blocks until the input ends, the frame limit or the no-data timeout is
/// reached, or ``stop`` is set. The sink is called on the same thread for every decoded frame,
/// with `decodeEndMicros` stamped; it decides what "presented" means (window or headless).
public final class Receiver: @unchecked Sendable {
    public let source: ByteSource
    public let options: ReceiverOptions
    /// Set from any thread to end ``run(sink:)`` soon (within one idle-poll period).
    public let stop = StopFlag()
    /// Called on the receive thread with every completed access unit (before decoding), for probes.
    public var accessUnitObserver: ((AccessUnit, ParameterSetStore) -> Void)?
    /// Called on the receive thread with each datagram's (or read's) size, for probes.
    public var datagramObserver: ((Int) -> Void)?

    private enum Ingest { case undecided, raw, rtp }
    private var ingest: Ingest = .undecided
    private var scanner: AnnexBScanner
    private var rtp: RTPReceiver?
    private var detector = CodecDetector()
    private var heldUnits: [NALUnit] = []
    private var assembler: AccessUnitAssembler?
    private var decoder: VideoDecoder?
    private var gate = RandomAccessGate()
    private var pacer: Pacer?
    private var perNAL = false
    private var damagedAUs = 0
    private var resets = 0
    private var disconnects = 0
    private var threadsChosen = false
    private var loggedWaitingForParameterSets = false
    private var accessUnitsWithoutParameterSets = 0
    private var lastChangeCount = 0
    private var decodeMicros: [UInt64] = []
    private var started = MonotonicClock.nowMicros()
    private let summaryLock = NSLock()
    private var _summary = ReceiverSummary()

    /// - Parameters:
    ///   - source: an opened source.
    ///   - options: see ``ReceiverOptions``.
    public init(source: ByteSource, options: ReceiverOptions) {
        self.source = source
        self.options = options
        self.scanner = AnnexBScanner(maxUnitBytes: options.maxAccessUnitBytes)
        self.gate = RandomAccessGate(timeoutMicros: UInt64(max(0, options.joinTimeoutMicros)))
    }

    /// The parameter sets seen (receive thread, or after ``run(sink:)`` returned).
    public var parameterSets: ParameterSetStore? { assembler?.parameterSets }

    /// Counters so far (safe from any thread).
    public var summary: ReceiverSummary { summaryLock.lock(); defer { summaryLock.unlock() }; return _summary }

    /// Runs until the end. Throws ``SourceError`` on a read error the source cannot continue from.
    /// - Parameter sink: takes each decoded frame (decode thread).
    private var splitPictures = 0
    private var referencesDamaged = false
    private var refreshLeft: Int?
    private var framesWithDamagedReferences = 0
    /// When a live byte stream's pending NAL unit and access unit are taken as complete.
    private var policy = IdleFlushPolicy(baseMicros: 0)

    public func run(sink: (DecodedFrame) -> Void) throws {
        started = MonotonicClock.nowMicros()
        var buffer = [UInt8](repeating: 0, count: UDPSource.maxDatagramBytes + 1)
        policy = IdleFlushPolicy(baseMicros: source.isLive || isPipe(source) ? options.idleFlushMicros : 0)
        var premature = 0
        var picturesSplit = 0
        var flushes = 0
        var flushedSinceData = true
        var lastDataMicros = MonotonicClock.nowMicros()
        let pollMicros = 50_000
        var lastPublishMicros: UInt64 = 0
        defer { publish(final: true) }

        loop: while !stop.isSet {
            // With RTP the marker bit (or a new timestamp) ends each picture exactly; the idle
            // flush is only the last resort for a marker lost at the end of a burst.
            let idle = policy.thresholdMicros(datagrams: source.deliversDatagrams)
            let idleNow = ingest == .rtp && idle > 0 ? max(idle, 50_000) : idle
            var timeout = (!flushedSinceData && idleNow > 0) ? idleNow : pollMicros
            // A jitter buffer releases held packets on time, not on the next poll.
            if ingest == .rtp && options.reorderWindowMicros > 0 { timeout = min(timeout, max(500, options.reorderWindowMicros / 4)) }
            let event = try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: timeout) }
            switch event {
            case .data(let count, let arrival, let truncated):
                let previousDataMicros = lastDataMicros
                lastDataMicros = arrival
                if source.deliversDatagrams { policy.noteDatagram(size: count) }
                flushedSinceData = false
                datagramObserver?(count)
                if ingest == .undecided { decideIngest(Array(buffer[0..<min(count, 64)])) }
                if ingest == .rtp {
                    let datagram = Array(buffer[0..<count])
                    if truncated { assembler?.markDamaged() }
                    // Events are handled after push returns: handling reads `rtp` (its codec).
                    var events: [RTPReceiver.Event] = []
                    rtp?.push(datagram, arrivalMicros: arrival) { events.append($0) }
                    for e in events { handle(rtpEvent: e, sink: sink) }
                } else {
                    buffer.withUnsafeBytes { raw in
                        scanner.push(UnsafeRawBufferPointer(rebasing: raw[0..<count]), arrivalMicros: arrival) { unit in
                            handle(unit: unit, sink: sink)
                        }
                    }
                    if truncated { scanner.markDamaged() }
                    if let split = assembler?.counters.picturesSplit, split != picturesSplit {
                        // (A new assembler, after a codec change, counts from 0 again.)
                        if split > picturesSplit {
                            splitPictures += split - picturesSplit
                            policy.noteSplit()
                            Log.info("a flush split a picture between two slices: short datagrams end access units at once only after more clean ones")
                        }
                        picturesSplit = split
                    }
                    if scanner.counters.prematureIdleFlushes != premature {
                        // The sender paused inside a NAL unit for longer than the idle time: learn it.
                        premature = scanner.counters.prematureIdleFlushes
                        // The cut unit went on as if whole: its access unit, if still in progress, and
                        // the pictures built on it are damaged.
                        if assembler?.pendingHasUnit(endingAt: scanner.lastIdleFlushedUnitEnd) == true {
                            assembler?.markDamaged()
                        } else {
                            damagedAUs += 1
                        }
                        referencesDamaged = true
                        refreshLeft = nil
                        let raised = policy.noteCut(pauseMicros: Int(clamping: arrival - min(arrival, previousDataMicros)))
                        Log.info(String(format: "an idle flush cut a NAL unit (the sender paused %.1f ms inside it): now waiting %.1f ms after a %@ datagram",
                                        Double(arrival - min(arrival, previousDataMicros)) / 1000, Double(raised.micros) / 1000,
                                        raised.afterShortDatagram ? "short" : "full-size"))
                    } else if scanner.counters.idleFlushes != flushes {
                        flushes = scanner.counters.idleFlushes
                        if let lowered = policy.noteCleanFlush() {
                            Log.info(String(format: "idle flush back to %.1f ms", Double(lowered) / 1000))
                        }
                    }
                    if source.deliversDatagrams && policy.isBurstEnd {
                        // The sender's last, short datagram of a burst: the NAL unit ends here, and
                        // the access unit too once it has the slices the last pictures had.
                        scanner.flush(atMicros: arrival, reason: .idle) { handle(unit: $0, sink: sink) }
                        if let slices = policy.slicesPerPicture, let pending = assembler?.pendingSlices, pending >= slices,
                           let au = assembler?.flush(atMicros: MonotonicClock.nowMicros(), reason: .burstEnd) {
                            handle(au: au, sink: sink)
                            flushedSinceData = true
                        }
                    }
                }
            case .emptyDatagram:
                continue
            case .timeout:
                let now = MonotonicClock.nowMicros()
                var events: [RTPReceiver.Event] = []
                rtp?.tick(nowMicros: now) { events.append($0) }
                for e in events { handle(rtpEvent: e, sink: sink) }
                if !flushedSinceData && idleNow > 0 && now >= lastDataMicros + UInt64(idleNow) {
                    if ingest != .rtp { scanner.flush(atMicros: now, reason: .idle) { handle(unit: $0, sink: sink) } }
                    if let au = assembler?.flush(atMicros: now, reason: .idleGap) { handle(au: au, sink: sink) }
                    flushedSinceData = true
                }
                if let t = options.timeoutSeconds, Double(now - lastDataMicros) / 1e6 >= t {
                    Log.info("no data for \(t) s: stopping")
                    break loop
                }
            case .end:
                break loop
            case .disconnected:
                // The byte stream ended mid-way: what is pending is complete; the next sender starts over.
                let now = MonotonicClock.nowMicros()
                scanner.flush(atMicros: now, reason: .endOfStream) { handle(unit: $0, sink: sink) }
                if let au = assembler?.flush(atMicros: now, reason: .endOfStream) { handle(au: au, sink: sink) }
                disconnects += 1
                Log.info("\(source.label): sender disconnected; \((source as? TCPSource)?.listeningPort ?? 0 > 0 ? "waiting for the next one" : "reconnecting")")
                flushedSinceData = true
            case .connected:
                restart("\(source.label): new sender connected")
                lastDataMicros = MonotonicClock.nowMicros()
            }
            if reachedFrameLimit { break }
            let now = MonotonicClock.nowMicros()
            if now >= lastPublishMicros + 100_000 { publish(); lastPublishMicros = now }
        }
        // End of input: whatever is pending is complete.
        let now = MonotonicClock.nowMicros()
        if reachedFrameLimit, let au = assembler?.flush(atMicros: now, reason: .endOfStream) {
            // Decoded already (per NAL); close it so that the counts agree.
            if au.damaged { damagedAUs += 1 }
        }
        if !stop.isSet && !reachedFrameLimit {
            scanner.flush(atMicros: now, reason: .endOfStream) { handle(unit: $0, sink: sink) }
            decideCodecIfUndecided(sink: sink)
            if let au = assembler?.flush(atMicros: now, reason: .endOfStream) { handle(au: au, sink: sink) }
            decoder?.drain { deliver($0, sink: sink) }
        }
    }

    private var reachedFrameLimit: Bool {
        guard let max = options.maxFrames else { return false }
        return carried.frames + (decoder?.counters.framesDecoded ?? 0) >= max
    }

    private func isPipe(_ s: ByteSource) -> Bool {
        guard s.label == "stdin" else { return false }
        var st = stat()
        return fstat(0, &st) == 0 && ((st.st_mode & S_IFMT) == S_IFIFO || (st.st_mode & S_IFMT) == S_IFSOCK)
    }

    // MARK: - ingest

    private func decideIngest(_ head: [UInt8]) {
        let looksRTP = RTPPacket.looksLikeRTP(head[...])
        let useRTP = source.deliversDatagrams && (options.transport == .rtp || (options.transport == .auto && looksRTP))
        if useRTP {
            ingest = .rtp
            let codec = options.codec ?? options.sdp?.codec
            rtp = RTPReceiver(codec: codec, payloadType: options.sdp?.payloadType,
                              reorderWindowMicros: UInt64(max(0, options.reorderWindowMicros)))
            Log.info("RTP\(options.transport == .auto ? " (detected: version 2, dynamic payload type)" : "")")
        } else {
            ingest = .raw
        }
    }

    private func handle(rtpEvent: RTPReceiver.Event, sink: (DecodedFrame) -> Void) {
        switch rtpEvent {
        case .unit(let u):
            handle(unit: u, sink: sink)
        case .endOfAccessUnit(let at):
            if let au = assembler?.flush(atMicros: at, reason: .markerBit) { handle(au: au, sink: sink) }
        case .loss:
            assembler?.markDamaged()
            decoder?.noteDamage()
        case .restart(let reason):
            restart(reason)
        }
    }

    /// A new sender on the same input: start over, keeping parameter sets for the decoder.
    private func restart(_ reason: String) {
        resets += 1
        Log.info("\(reason): resetting the decoder")
        assembler?.discardPending()
        try? decoder?.reset(parameterSets: assembler?.parameterSets.allUnits ?? [])
        gate.restart(atMicros: MonotonicClock.nowMicros())
    }

    // MARK: - stages

    private func handle(unit: NALUnit, sink: (DecodedFrame) -> Void) {
        if assembler == nil {
            let codec = options.codec ?? rtp?.codec ?? options.sdp?.codec ?? detector.observe(unit.bytes)
            guard let codec else {
                heldUnits.append(unit)
                if heldUnits.count > 256 { heldUnits.removeFirst(heldUnits.count - 256) }
                return
            }
            start(codec: codec, detected: options.codec == nil)
            let held = heldUnits
            heldUnits.removeAll()
            for u in held { push(u, sink: sink) }
        }
        if options.codec == nil, let asm = assembler, let other = CodecDetector.decisive(unit.bytes), other != asm.codec {
            // A parameter set of the other codec: the sender switched codec.
            switchCodec(to: other, sink: sink)
        }
        push(unit, sink: sink)
    }

    private func switchCodec(to codec: VideoCodec, sink: (DecodedFrame) -> Void) {
        guard let old = assembler?.codec else { return }
        Log.info("codec changed: \(old.displayName) → \(codec.displayName)")
        resets += 1
        // Finish the old stream's last picture, keep its counts, then start clean.
        let now = MonotonicClock.nowMicros()
        if let au = assembler?.flush(atMicros: now, reason: .endOfStream) { handle(au: au, sink: sink) }
        decoder?.drain { deliver($0, sink: sink) }
        carryCounts()
        assembler = nil
        start(codec: codec, detected: true)
    }

    /// Counts of assemblers and decoders replaced by a codec switch.
    private var carried = (nalUnits: 0, accessUnits: 0, invalid: 0, frames: 0, errors: 0, concealed: 0)

    private func carryCounts() {
        if let a = assembler {
            carried.nalUnits += a.counters.nalUnits
            carried.accessUnits += a.counters.accessUnits
            carried.invalid += a.counters.invalidUnits
        }
        if let d = decoder {
            carried.frames += d.counters.framesDecoded
            carried.errors += d.counters.decodeErrors
            carried.concealed += d.counters.concealedFrames
        }
    }

    private func decideCodecIfUndecided(sink: (DecodedFrame) -> Void) {
        guard assembler == nil, !heldUnits.isEmpty else { return }
        var d = CodecDetector(maxUnits: 0)
        var codec: VideoCodec = .h264
        for u in heldUnits { if let c = d.observe(u.bytes) { codec = c; break } }
        start(codec: codec, detected: true)
        let held = heldUnits
        heldUnits.removeAll()
        for u in held { push(u, sink: sink) }
    }

    private func start(codec: VideoCodec, detected: Bool) {
        Log.info("codec: \(codec.displayName)\(detected ? " (detected from NAL headers)" : "")")
        var asm = AccessUnitAssembler(codec: codec, maxAccessUnitBytes: options.maxAccessUnitBytes,
                                      maxPictureWidth: options.maxPictureWidth, maxPictureHeight: options.maxPictureHeight)
        // Parameter sets from an SDP come first, as if in-band.
        for ps in options.sdp?.parameterSets ?? [] { _ = asm.push(NALUnit(bytes: ps)) }
        assembler = asm
        let paced = !source.isLive && !options.untimed
        switch options.decodeMode {
        case .auto, .accessUnit: perNAL = false
        case .nal: perNAL = codec == .h264 && !paced
        }
        do {
            decoder = try VideoDecoder(codec: codec, threads: options.decoderThreads, perNAL: perNAL)
            if let sets = options.sdp?.parameterSets, !sets.isEmpty { decoder?.prime(with: sets) }
        } catch {
            Log.error("\(error)")
            stop.set()
        }
        gate.restart(atMicros: MonotonicClock.nowMicros())
        threadsChosen = false
        summaryLock.lock(); _summary.codec = codec.displayName; summaryLock.unlock()
    }

    private func push(_ unit: NALUnit, sink: (DecodedFrame) -> Void) {
        // Mutated in place: a copy of the assembler would copy its pending units on every push.
        guard assembler != nil else { return }
        let au = assembler!.push(unit)
        let asm = assembler!
        reportParameterSetChanges(asm.parameterSets)
        if let au { handle(au: au, sink: sink) }
        guard perNAL, let decoder, !reachedFrameLimit, let header = NALUnitHeader(codec: asm.codec, bytes: unit.bytes) else { return }
        // The unit belongs to the access unit in progress, whose index is the next one out.
        guard gate.admit(unit: unit.bytes, header: header, nowMicros: MonotonicClock.nowMicros()) else { return }
        var capture: UInt64?
        if header.kind == .sei { capture = PrecisionTimestampSEI.read(seiNALUnit: unit.bytes, codec: asm.codec) }
        decoder.decode(unit: unit, accessUnitIndex: asm.nextIndex, isParameterSet: header.isParameterSet,
                       captureWallMicros: capture) { deliver($0, sink: sink) }
    }

    private func reportParameterSetChanges(_ store: ParameterSetStore) {
        if store.changes.count != lastChangeCount {
            for line in store.changes.suffix(max(0, store.changes.count - lastChangeCount)) { Log.info(line) }
            lastChangeCount = store.changes.count
        }
    }

    private func handle(au: AccessUnit, sink: (DecodedFrame) -> Void) {
        if let observe = accessUnitObserver, let store = assembler?.parameterSets { observe(au, store) }
        policy.noteAccessUnit(slices: au.units.reduce(0) { $0 + (NALUnitHeader(codec: au.codec, bytes: $1.bytes)?.isVCL == true ? 1 : 0) })
        guard let decoder, !reachedFrameLimit else { return }
        if au.damaged { damagedAUs += 1 }
        if perNAL {
            // Its units were decoded as they came; the frame may already be out.
            if au.damaged { decoder.noteDamage() }
            return
        }
        // Joined a stream whose parameter sets came before we did: wait for them, quietly.
        if let store = assembler?.parameterSets, store.sps.isEmpty || store.pps.isEmpty {
            if !loggedWaitingForParameterSets {
                Log.info("waiting for parameter sets (SPS/PPS\(au.codec == .h265 ? "/VPS" : "")) before decoding; use --sdp if the sender sends them only once")
                loggedWaitingForParameterSets = true
            }
            accessUnitsWithoutParameterSets += 1
            return
        }
        guard gate.admit(accessUnit: au, nowMicros: MonotonicClock.nowMicros()) else { return }
        if !threadsChosen {
            threadsChosen = true
            let slices = au.units.filter { NALUnitHeader(codec: au.codec, bytes: $0.bytes)?.isVCL ?? false }.count
            if slices > 1 && options.autoSliceThreads && options.decoderThreads == 1,
               let d = try? VideoDecoder(codec: au.codec, threads: 2, perNAL: perNAL) {
                // Nothing decoded yet: the first picture goes to a decoder with slice threads.
                d.prime(with: assembler?.parameterSets.allUnits ?? [])
                self.decoder = d
                Log.info("\(slices) slices per picture: decoding with 2 slice threads")
            }
        }
        guard let decoder = self.decoder else { return }
        if !source.isLive && !options.untimed {
            if pacer == nil {
                var fps = options.fps
                if fps == nil, let vui = assembler?.parameterSets.latestFormat?.frameRate {
                    if vui >= 1 && vui <= 240 {
                        fps = vui
                    } else {
                        Log.info(String(format: "warning: the VUI frame rate %.4g fps is implausible; playing at 30 fps (use --fps N or --untimed)", vui))
                        fps = 30
                    }
                }
                if fps == nil {
                    fps = 30
                    Log.info("warning: the stream carries no frame rate (VUI timing); playing at 30 fps (use --fps N or --untimed)")
                } else {
                    Log.info(String(format: "playing at %.3f fps%@", fps!, options.fps == nil ? " (VUI timing)" : ""))
                }
                pacer = Pacer(framesPerSecond: fps)
            }
            let release = pacer!.releaseTime(arrivalMicros: au.completeMicros)
            // Sleep in short steps so that a stop (Ctrl-C, q) is never held up by the pace.
            while !stop.isSet && MonotonicClock.nowMicros() < release {
                MonotonicClock.sleep(untilMicros: min(release, MonotonicClock.nowMicros() + 50_000))
            }
            if stop.isSet { return }
        }
        decoder.decode(inheritDamage(au)) { deliver($0, sink: sink) }
    }

    /// Pictures predicted from a damaged one carry its damage until a clean IDR/IRAP, or until a
    /// recovery point's refresh is complete (H.264 `recovery_frame_cnt` pictures later): they are
    /// marked damaged (counted, and held back by `--hide-damaged`) so that a frame that looks
    /// whole but is built on broken references is never passed off as clean.
    private func inheritDamage(_ au: AccessUnit) -> AccessUnit {
        if au.damaged {
            referencesDamaged = true
            refreshLeft = nil
            return au
        }
        guard referencesDamaged else { return au }
        if au.isRandomAccessPoint {
            referencesDamaged = false
            refreshLeft = nil
            return au
        }
        if refreshLeft == nil {
            for u in au.units {
                if let n = RandomAccessGate.recoveryFrameCount(u.bytes, codec: au.codec) { refreshLeft = n; break }
            }
        }
        if let left = refreshLeft {
            if left <= 0 { referencesDamaged = false; refreshLeft = nil; return au }
            refreshLeft = left - 1
        }
        framesWithDamagedReferences += 1
        var out = au
        out.damaged = true
        return out
    }

    private func deliver(_ frame: DecodedFrame, sink: (DecodedFrame) -> Void) {
        if frame.timing.lastByteMicros > 0 && frame.timing.decodeEndMicros >= frame.timing.decodeStartMicros {
            if decodeMicros.count < 100_000 { decodeMicros.append(frame.timing.decodeEndMicros - frame.timing.decodeStartMicros) }
        }
        sink(frame)
    }

    private func publish(final: Bool = false) {
        var s = ReceiverSummary()
        s.source = source.label
        s.isDatagramSource = source.deliversDatagrams
        let sc = source.counters
        s.datagrams = sc.datagrams; s.bytes = sc.bytes; s.emptyDatagrams = sc.emptyDatagrams
        s.truncatedDatagrams = sc.truncatedDatagrams; s.connections = sc.connections
        let k = scanner.counters
        s.junkBytes = k.junkBytes; s.zeroLengthNALUnits = k.zeroLengthUnits; s.oversizeNALUnits = k.oversizeUnits
        s.idleFlushes = k.idleFlushes
        s.prematureIdleFlushes = k.prematureIdleFlushes
        s.picturesSplit = splitPictures
        s.framesWithDamagedReferences = framesWithDamagedReferences
        if let a = assembler {
            s.codec = a.codec.displayName
            s.nalUnits = carried.nalUnits + a.counters.nalUnits; s.accessUnits = carried.accessUnits + a.counters.accessUnits
            s.invalidNALUnits = carried.invalid + a.counters.invalidUnits; s.oversizeAccessUnits = a.counters.oversizeAccessUnits
            s.unitsWithoutPicture = a.counters.unitsWithoutPicture
            s.invalidParameterSets = a.parameterSets.invalidParameterSets
            s.refusedPictureSize = a.parameterSets.oversizePictures
            s.refusedAccessUnits = a.counters.refusedAccessUnits
            s.parameterSetChanges = a.parameterSets.changes
            s.format = a.parameterSets.latestFormat.map { "\($0.codec.displayName) \($0)" }
        }
        if let d = decoder {
            s.framesDecoded = carried.frames + d.counters.framesDecoded
            s.decodeErrors = carried.errors + d.counters.decodeErrors
            s.concealedFrames = carried.concealed + d.counters.concealedFrames
        }
        if let r = rtp?.counters {
            s.rtp = true
            s.rtpPackets = r.packets
            s.datagramsLost = r.sequence.lost
            s.datagramsReordered = r.sequence.reordered
            s.datagramsDuplicated = r.sequence.duplicates
            s.notRTP = r.notRTP + r.otherPayloadType
            s.damagedNALUnits = r.payload.damagedUnits
            s.oversizeNALUnits += r.payload.oversizeUnits
            s.malformedPayloads = r.payload.malformed + r.payload.unsupported
        }
        s.resets = resets
        s.disconnects = disconnects
        s.disallowed = sc.disallowed
        s.skippedBeforeRandomAccess = gate.skipped + accessUnitsWithoutParameterSets
        s.damagedAccessUnits = damagedAUs
        if final && !decodeMicros.isEmpty {
            let sorted = decodeMicros.sorted()
            s.decodeMillisP50 = Double(sorted[sorted.count / 2]) / 1000
        }
        s.durationSeconds = Double(MonotonicClock.nowMicros() - started) / 1e6
        summaryLock.lock()
        let keep = (_summary.framesDisplayed, _summary.framesDropped)
        if !final { s.decodeMillisP50 = _summary.decodeMillisP50 }
        _summary = s
        (_summary.framesDisplayed, _summary.framesDropped) = keep
        summaryLock.unlock()
    }

    /// Records what the display did, for the summary.
    public func setDisplayCounts(displayed: Int, dropped: Int) {
        summaryLock.lock(); _summary.framesDisplayed = displayed; _summary.framesDropped = dropped; summaryLock.unlock()
    }
}
