#if canImport(Glibc)
import Glibc
import SpyglassBitstream
import SpyglassPipeline
import SpyglassTransport
import SpyglassIngest
#endif

/// The stages of one feed and the loop that drives them, on the feed's thread only.
///
/// Each stage speaks in events; this type only routes them: source read → depacketizer events →
/// access-unit stage events → decode gate verdict → decoder → frame sink.
final class FeedLoop {
    let source: ByteSource
    let sink: any FrameSink
    private var options: ReceiverOptions
    /// No `--sdp` was given: the source's own session description is used, and followed.
    private let followsAnnouncedSession: Bool
    private let decoderFactory: DecoderFactory
    private let observers: FeedObservers
    private let metrics: MetricsRegistry
    private let stop: StopFlag
    private let status: FeedStatus

    private var depacketizer: any Depacketizer
    /// The idle time that ends a unit on this source, µs (0: never; files).
    private let idleFlushMicros: Int
    private var stage: AccessUnitStage
    private var gate: DecodeGate
    private var decoder: (any VideoDecoding)?
    private var perNAL = false
    /// The decoder has made pictures since it opened (``releaseDecoderIfSilent(_:)`` closes it).
    private var decoderHoldsPictures = false
    /// Damage, a repair or a new sender went through the decoder since it last opened: it
    /// opens afresh at the next clean IDR or BLA (``startDecoderAfreshIfDamaged(before:_:)``).
    private var decoderSawDamage = false
    private var threadsChosen = false
    private var framesDecoded = 0
    private var parameterSetChanges = 0
    /// What the feed's state says already, so that the hot path does not take its lock.
    private var sawData = false
    /// Why the input cannot be read, once a stage refused it: the feed fails with it.
    private var refused: String?
    private var live = false
    private var lastDataMicros: UInt64
    /// The feed's clock: monotonic, or a manual one in tests.
    private let clock: any FeedClock
    /// When the loop started reading, µs; and whether the source was asked why nothing came.
    private var runStartMicros: UInt64 = 0
    private var silenceDiagnosed = false
    /// No datagram at all this long after the start: ask the source why (a multicast group
    /// joined on the wrong interface), once per feed, µs.
    static let silenceDiagnosisMicros: UInt64 = 3_000_000
    private var events: [DepacketizerEvent] = []
    /// Access units since the last IDR/IRAP, for repairing a unit found cut after its picture.
    private var repairBuffer = RepairBuffer()
    /// `--keyframe-url`: the HTTP GETs that ask the camera for an IDR.
    private var keyframeURL: KeyframeURLRequests?
    /// Access units that repairs may decode again (``RepairBudget``).
    private var repairBudget: RepairBudget
    private var stageEvents: [AccessUnitStage.Event] = []
    /// How often a quiet source is polled (stop flag, no-data timeout, metrics), µs.
    static let pollMicros = 50_000

    init(source: ByteSource, options: ReceiverOptions, sink: any FrameSink, decoderFactory: @escaping DecoderFactory,
         observers: FeedObservers, metrics: MetricsRegistry, stop: StopFlag, status: FeedStatus, clock: any FeedClock) {
        self.source = source
        self.clock = clock
        lastDataMicros = clock.nowMicros()
        repairBudget = RepairBudget(nowMicros: lastDataMicros)
        var options = options
        // An RTSP camera's SDP (payload type, codec, sprop parameter sets), unless --sdp overrides it.
        followsAnnouncedSession = options.sdp == nil
        if options.sdp == nil { options.sdp = source.announcedSession }
        self.options = options
        self.sink = sink
        self.decoderFactory = decoderFactory
        self.observers = observers
        self.metrics = metrics
        self.stop = stop
        self.status = status
        let paced = !source.deliversInRealTime && !options.untimed
        idleFlushMicros = source.idleGapsEndPictures ? options.idleFlushMicros : 0
        depacketizer = AutoDepacketizer(settings: options.depacketizer, datagrams: source.deliversDatagrams, idleFlushMicros: idleFlushMicros)
        stage = AccessUnitStage(settings: options.assembly)
        gate = DecodeGate(joinTimeoutMicros: options.join == .show ? 0 : options.joinTimeoutMicros, pacing: paced ? .paced(fps: options.fps) : .live)
        keyframeURL = options.keyframeURL.map { KeyframeURLRequests(asker: KeyframeURL(url: $0, label: source.label)) }
    }

    /// Runs until the input ends, the frame limit or the no-data timeout, or a stop.
    /// - Throws: ``SourceError/read(_:)`` when the source cannot go on.
    func run() throws {
        var buffer = [UInt8](repeating: 0, count: UDPSource.maxDatagramBytes + 1)
        var lastPublishMicros: UInt64 = 0
        runStartMicros = clock.nowMicros()
        defer {
            keyframeURL?.asker.stop()
            publish()
            observers.end?(stage.parameterSets)
        }
        loop: while !stop.isSet && !reachedFrameLimit {
            let timeout = depacketizer.pollTimeoutMicros(default: Self.pollMicros)
            let read = try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: timeout) }
            let now = clock.nowMicros()
            switch read {
            case .data(let count, let arrival, let truncated):
                take(buffer, count: count, arrivalMicros: arrival, truncated: truncated)
            case .emptyDatagram:
                break
            case .timeout:
                if let why = source.connectionProblem { status.set(.connecting(why)) }
                depacketizer.tick(nowMicros: now) { events.append($0) }
                releaseDecoderIfSilent(now)
                showHeldPicturesAtEnd(now)
                let stopping = options.timeoutSeconds.map { Double(now - lastDataMicros) / 1e6 >= $0 } ?? false
                if !sawData && !silenceDiagnosed && (stopping || now >= runStartMicros + Self.silenceDiagnosisMicros) {
                    silenceDiagnosed = true
                    if let line = source.silenceDiagnosis(silentMicros: now - runStartMicros) { Log.info(line) }
                }
                if stopping {
                    Log.info("no data for \(options.timeoutSeconds!) s: stopping")
                    break loop
                }
            case .end:
                break loop
            case .disconnected:
                senderLeft(now)
            case .connected:
                takeAnnouncedSession()
                newDepacketizer()
                restart("\(source.label): new sender connected")
                lastDataMicros = now
            }
            route()
            askForKeyframe(now)
            if let refused { throw SourceError.read(refused) }
            if now >= lastPublishMicros + 100_000 { publish(); lastPublishMicros = now }
        }
        endOfInput()
    }

    // MARK: - routing events

    private func take(_ buffer: [UInt8], count: Int, arrivalMicros: UInt64, truncated: Bool) {
        lastDataMicros = arrivalMicros
        observers.datagram?(count)
        if let keep = observers.rawInput { buffer.withUnsafeBytes { keep(UnsafeRawBufferPointer(rebasing: $0[0..<count]), arrivalMicros) } }
        if !sawData { sawData = true; status.set(.waitingForPicture) }
        buffer.withUnsafeBytes { raw in
            depacketizer.push(UnsafeRawBufferPointer(rebasing: raw[0..<count]), arrivalMicros: arrivalMicros,
                              truncated: truncated) { events.append($0) }
        }
    }

    /// Handles what the depacketizer said, then what the access-unit stage said.
    private func route() {
        var i = 0
        while i < events.count {
            handle(events[i])
            i += 1
        }
        events.removeAll(keepingCapacity: true)
    }

    private func handle(_ event: DepacketizerEvent) {
        switch event {
        case .unit(let unit) where unit.repairs != nil:
            repair(unit, replacing: unit.repairs!)
        case .unit(let unit):
            stage.push(unit, codecHint: depacketizer.codec) { stageEvents.append($0) }
            routeStage()
            if perNAL { decodePerNAL(unit) }
        case .accessUnitEnd(let rule, let at, let minimumSlices):
            stage.end(by: rule, atMicros: at, minimumSlices: minimumSlices) { stageEvents.append($0) }
            routeStage()
        case .metadata(let m):
            observers.metadata?(m)
            if let text = m.positionText { metrics.setPlatform(text) }
        case .captureTime(let wallMicros, let source):
            stage.noteCaptureTime(wallMicros: wallMicros, source: source)
        case .damage:
            stage.markDamaged()
            decoder?.noteDamage()
            keyframeDamage(.loss)
        case .cut(let unitEnd, _):
            keyframeDamage(.cut)
            // The cut unit's picture, if still in progress, goes on damaged; if it already went
            // out, the pictures built on it carry the damage.
            if !stage.noteCut(unitLastByteMicros: unitEnd) { gate.noteDamageAfterTheFact() }
        case .restart(let reason):
            restart(reason)
        case .toSender(let packet, let keyframeRequest):
            if keyframeRequest != nil { keyframeURL?.rtcpAsked() }
            guard source.sendToSender(packet) else { break }
            metrics.add(.rtcpPacketsSent)
            if let keyframeRequest { countKeyframeRequest(keyframeRequest) }
        case .recovered(let micros):
            metrics.observe(.recovery, micros: micros)
        case .note(let line):
            Log.info(line)
        case .refuse(let reason):
            refused = "\(source.label): \(reason)"
        }
    }

    private func countKeyframeRequest(_ reason: KeyframeRequester.Reason) {
        switch reason {
        case .loss: metrics.add(.keyframeRequestsLoss)
        case .cut: metrics.add(.keyframeRequestsCut)
        case .join: metrics.add(.keyframeRequestsJoin)
        }
    }

    /// `--keyframe-url` on a link with no RTCP: a GET when one is due, counted by its reason.
    private func askForKeyframe(_ now: UInt64) {
        guard let reason = keyframeURL?.tick(nowMicros: now, rtp: depacketizer.framing == .rtp) else { return }
        countKeyframeRequest(reason)
    }

    /// `--keyframe-url`: the picture was damaged, or a join waits for a keyframe.
    private func keyframeDamage(_ reason: KeyframeRequester.Reason) {
        keyframeURL?.damaged(reason, nowMicros: clock.nowMicros(), rtp: depacketizer.framing == .rtp)
    }

    private func routeStage() {
        var i = 0
        while i < stageEvents.count {
            let e = stageEvents[i]
            i += 1
            switch e {
            case .accessUnit(let au, let store): accessUnit(au, store)
            case .codecChosen(let codec, let detected): open(codec, detected: detected)
            case .codecChanged(let old, let new): codecChanged(from: old, to: new)
            case .pictureSplit:
                depacketizer.notePictureSplit()
                Log.info("a flush split a picture between two slices: short datagrams end access units at once only after more clean ones")
            case .parameterSetChange(let line):
                parameterSetChanges += 1
                // The first 20, then every 1000th: a flipping sender must not flood the log.
                if parameterSetChanges <= 20 || parameterSetChanges % 1000 == 0 {
                    Log.info(parameterSetChanges == 20 ? line + " (further changes logged every 1000th)" : line)
                }
                metrics.noteParameterSetChange(line)
            case .codecMismatch(let named, let by, let stream, let following):
                metrics.add(.codecMismatches)
                Log.info("warning: \(by) says \(named.displayName) but the stream is \(stream.displayName) (its parameter sets): "
                         + (following ? "following the stream" : "decoding as \(named.displayName) as told (without --codec the stream is followed)"))
            }
        }
        stageEvents.removeAll(keepingCapacity: true)
    }

    // MARK: - access units to the decoder

    private func accessUnit(_ au: AccessUnit, _ store: ParameterSetStore) {
        if au.isSplitFragment && putBack(au, store) { return }
        let original = au
        observers.accessUnit?(au, store)
        depacketizer.noteAccessUnit(slices: au.sliceCount)
        guard decoder != nil, !reachedFrameLimit else { return }
        if perNAL {
            // Its units were decoded as they came; the frame may already be out.
            gate.noteDecodedPerNAL(au)
            if au.damaged { decoder?.noteDamage() }
            return
        }
        let verdict = gate.admit(au, parameterSetsReady: !store.sps.isEmpty && !store.pps.isEmpty,
                                 streamFrameRate: store.latestFormat?.frameRate, nowMicros: clock.nowMicros())
        for line in gate.takeNotes() { Log.info(line) }
        switch verdict {
        case .skip(.waitingForParameterSets(first: true)):
            let sets = "SPS/PPS\(au.codec == .h265 ? "/VPS" : "")"
            let hint = depacketizer.framing == .rtp
                ? "they come with the sender's next keyframe (asked for with an RTCP PLI unless --keyframe-requests off); a sender that carries them only in its SDP needs --sdp FILE"
                : "they come with the sender's next keyframe if it repeats them there; if no picture comes, the sender sends them only at its start ("
                    + (au.codec == .h265 ? "x265: repeat-headers=1; GStreamer: h265parse config-interval=-1)"
                                         : "x264: repeat-headers=1; libcamera-vid: --inline; GStreamer: h264parse config-interval=-1)")
            Log.info("waiting for parameter sets (\(sets)) before decoding: \(hint)")
            keyframeDamage(.join)
        case .skip:
            keyframeDamage(.join)
        case .hold(let au, let release):
            // Sleep in short steps so that a stop (Ctrl-C, q) is never held up by the pace.
            while !stop.isSet && clock.nowMicros() < release {
                clock.sleep(untilMicros: min(release, clock.nowMicros() + 50_000))
            }
            if !stop.isSet { decode(au, store, original: original) }
        case .decode(let au):
            decode(au, store, original: original)
        }
    }

    private func decode(_ au: AccessUnit, _ store: ParameterSetStore, original: AccessUnit) {
        if !threadsChosen { chooseThreads(au, store) }
        startDecoderAfreshIfDamaged(before: au, store)
        repairBuffer.keep(original)
        if au.damaged { decoderSawDamage = true }
        if au.isRandomAccessPoint && !au.damaged { keyframeURL?.clean(nowMicros: clock.nowMicros()) }
        decoder?.decode(au) { frame in
            if frame.damaged && !au.damaged {   // concealed by the decoder
                gate.noteDamagedPicture()
                keyframeDamage(.loss)
            }
            if frame.damaged { decoderSawDamage = true }
            deliver(frame)
        }
    }

    /// libavcodec keeps what damaged input made it allocate (every PPS id a broken unit named,
    /// tables for sizes it claimed) for the life of its context: about 5 MB after the soak's
    /// garbage burst, never given back. A clean IDR or BLA needs nothing from before it, so
    /// after damage the decoder is drained (pictures held for reordering go out first) and
    /// opens afresh for it, primed with the stored parameter sets if it carries none.
    private func startDecoderAfreshIfDamaged(before au: AccessUnit, _ store: ParameterSetStore) {
        // At an IDR or BLA, or at a CRA of a stream that reorders no pictures (so none can lead
        // its CRA): reopened at a CRA, libavcodec drops the RASL pictures that follow it, which
        // the stream carries and continuous decoding shows (an open-GOP stream lost two pictures
        // per GOP after a repair).
        let noLeadingPictures = store.latestFormat?.maxNumReorderFrames == 0
        guard decoderSawDamage, au.isClosedRandomAccessPoint || (au.isRandomAccessPoint && noLeadingPictures),
              !au.damaged, let decoder else { return }
        decoderSawDamage = false
        decoder.drain { deliver($0) }
        decoder.release(parameterSets: store.allUnits)
    }

    private func decodePerNAL(_ unit: NALUnit) {
        guard let decoder, let codec = stage.codec, !reachedFrameLimit, let unit = unit.parsed(as: codec),
              let header = unit.header else { return }
        guard gate.admit(unit: unit, nowMicros: clock.nowMicros()) else { return }
        let capture = header.kind == .sei ? SEIFacts(unit: unit.bytes, codec: codec)?.captureWallMicros : nil
        // The unit belongs to the access unit in progress, whose index is the next one out.
        decoder.decode(unit: unit, accessUnitIndex: stage.nextIndex, isParameterSet: header.isParameterSet,
                       captureWallMicros: capture) { deliver($0) }
    }

    /// A unit an idle flush had passed on cut came again whole: put it in its access unit, and if
    /// that picture was already decoded, decode again from the last IDR/IRAP, showing only the
    /// newest picture (framemd5 takes back and rewrites the re-decoded pictures). The observers
    /// (the recorder) get the repaired access unit in place of the one they had.
    private func repair(_ unit: NALUnit, replacing cutEnd: UInt64) {
        if stage.replacePending(unit, endingAt: cutEnd) {
            metrics.add(.repairs)
            return
        }
        guard !perNAL, decoder != nil, let store = stage.parameterSets,
              let replacement = repairBuffer.replace(unit, endingAt: cutEnd) else {
            metrics.add(.repairsFailed)
            Log.info("a NAL unit cut by an idle flush came again whole, but its picture is not held for decoding again (none since the last IDR/IRAP, or past the cap): it stays marked damaged until a clean IDR/IRAP")
            return
        }
        decodeAgain(replacement, store, what: "a NAL unit cut by an idle flush")
    }

    /// The slices a flush split off a picture that already went out (``AccessUnit/isSplitFragment``):
    /// put them back in its access unit and decode again from the last IDR/IRAP, as a repair does.
    /// - Returns: false when that picture is not held: the fragment goes on as a picture of its own, damaged.
    private func putBack(_ fragment: AccessUnit, _ store: ParameterSetStore) -> Bool {
        guard !perNAL, decoder != nil, let replacement = repairBuffer.merge(fragment) else { return false }
        // Past the budget the picture stays as shown, without these slices: what follows is on damaged references.
        if !decodeAgain(replacement, store, what: "a picture a flush had split") { gate.noteDamageAfterTheFact() }
        return true
    }

    /// Tells the observers (the recorder) of the repaired access unit, then decodes again from
    /// the IDR/IRAP within the repair budget.
    /// - Returns: false when the budget (or the decoder) did not allow it.
    @discardableResult
    private func decodeAgain(_ replacement: RepairBuffer.Replacement, _ store: ParameterSetStore, what: String) -> Bool {
        observers.accessUnitRepaired?(replacement.repaired, store)
        guard repairBudget.take(replacement.accessUnits.count, nowMicros: clock.nowMicros()) else {
            metrics.add(.repairsFailed)
            Log.info("\(what) came whole, but repairs have decoded too much again lately (\(Int(RepairBudget.refillPerSecond)) access units a second at most): it stays marked damaged until a clean IDR/IRAP")
            return false
        }
        return redecode(replacement.accessUnits, store, what: what)
    }


    /// Decodes `aus` (from an IDR/IRAP) again on a reopened decoder; only the newest picture is shown.
    private func redecode(_ aus: [AccessUnit], _ store: ParameterSetStore, what: String) -> Bool {
        guard let decoder, let first = aus.first else { return false }
        do { try decoder.reset(parameterSets: store.allUnits) } catch {
            metrics.add(.repairsFailed)
            Log.info("repair: the decoder could not be reopened: \(error)")
            return false
        }
        sink.rewind(toAccessUnit: first.index)
        // Each picture goes on as soon as the next one is out: holding them all would grow the
        // new decoder's frame pool to the whole run (up to 600 pictures), which it keeps for life.
        var previous: DecodedFrame?
        for au in aus {
            decoder.decode(au) { frame in
                if var p = previous {
                    p.isRepairReplay = true
                    sink.consume(p)
                }
                previous = frame
            }
        }
        if var newest = previous {
            newest.isRepairNewest = true
            sink.consume(newest)
        }
        gate.noteRepaired()
        decoderSawDamage = true
        metrics.add(.repairs)
        Log.info("repaired \(what): decoded \(aus.count) access units again from the last IDR/IRAP")
        return true
    }

    /// Once: pictures of several slices decode on 2 slice threads (bit-exact, no added delay).
    private func chooseThreads(_ au: AccessUnit, _ store: ParameterSetStore) {
        threadsChosen = true
        // Not for H.265: FFmpeg 5.1's HEVC decoder can crash on a malformed stream with slice
        // threads (a 4 KB mutated file takes the whole process down; one thread decodes it).
        guard au.sliceCount > 1, au.codec == .h264, options.autoSliceThreads, options.decoderThreads == 1,
              let d = try? decoderFactory(decoderSettings(au.codec, threads: 2)) else { return }
        // Nothing decoded yet: the first picture goes to a decoder with slice threads.
        d.prime(with: store.allUnits)
        replaceDecoder(with: d)
        Log.info("\(au.sliceCount) slices per picture: decoding with 2 slice threads")
    }

    private func decoderSettings(_ codec: VideoCodec, threads: Int) -> DecoderSettings {
        DecoderSettings(codec: codec, threads: threads, perNAL: perNAL, showCorrupt: options.join == .show)
    }

    private func deliver(_ frame: DecodedFrame) {
        decoderHoldsPictures = true
        framesDecoded += 1
        metrics.add(.framesDecoded)
        let t = frame.timing
        if t.lastByteMicros > 0, let decode = t.decodeMicros {
            metrics.observe(.decode, micros: decode)
            if t.heldForOrderFromMicros > 0 { metrics.observe(.reorder, micros: t.reorderMicros) }
            if t.decodeStartMicros >= t.lastByteMicros { metrics.observe(.assembly, micros: t.decodeStartMicros - t.lastByteMicros) }
        }
        if !live { live = true; status.set(.live) }
        sink.consume(frame)
    }

    // MARK: - codec, restarts, end

    private func open(_ codec: VideoCodec, detected: Bool) {
        Log.info("codec: \(codec.displayName)\(detected ? " (detected from NAL headers)" : "")")
        let paced = !source.deliversInRealTime && !options.untimed
        perNAL = options.decodeMode == .nal && codec == .h264 && !paced
        do {
            let d = try decoderFactory(decoderSettings(codec, threads: options.decoderThreads))
            if let sets = options.sdp?.parameterSets(for: codec), !sets.isEmpty { d.prime(with: sets) }
            replaceDecoder(with: d)
        } catch {
            Log.error("\(error)")
            stop.set()
        }
        gate.restart(atMicros: clock.nowMicros())
        threadsChosen = false
        metrics.setFormat(codec: codec.displayName, format: nil)
        status.codec(codec.displayName)
    }

    private func codecChanged(from old: VideoCodec, to new: VideoCodec) {
        Log.info("codec changed: \(old.displayName) → \(new.displayName)")
        metrics.add(.resets)
        metrics.add(.codecChanges)
        repairBuffer.reset()
        decoder?.drain { deliver($0) }
    }

    /// A replay held on its last picture: the access unit in progress ends and the decoder gives
    /// up the pictures it holds for reordering (the last two of an x264 stream with B-frames
    /// were never shown, and the held picture was not the last). Once per hold; what follows a
    /// hold starts at a keyframe.
    private func showHeldPicturesAtEnd(_ now: UInt64) {
        guard source.isHeldAtEnd else { heldPicturesShown = false; return }
        guard !heldPicturesShown else { return }
        heldPicturesShown = true
        depacketizer.finish(nowMicros: now) { events.append($0) }
        route()
        decoder?.drain { deliver($0) }
    }
    private var heldPicturesShown = false

    /// A live input silent for ``ReceiverOptions/decoderIdleReleaseMicros``: the decoder closes
    /// (its pictures' memory goes back), and so does what waits for a repair; the next data
    /// joins again at a keyframe. Once per silence.
    private func releaseDecoderIfSilent(_ now: UInt64) {
        let after = options.decoderIdleReleaseMicros
        if after > 0, stage.heldBytes > 0, source.deliversInRealTime, now >= lastDataMicros + after {
            // Units that never named a codec (garbage): the next data starts a new stream.
            stage.forgetHeldUnits()
            MemoryPolicy.giveBackFreedMemory()
        }
        guard decoderHoldsPictures, after > 0, source.deliversInRealTime, !source.isHolding, now >= lastDataMicros + after,
              decoder != nil else { return }
        // 10 s of silence ends any picture in progress: it and the pictures held for reordering
        // are shown first (with --idle-flush-ms 0 the last one waited for the next data).
        depacketizer.finish(nowMicros: now) { events.append($0) }
        route()
        self.decoder?.drain { deliver($0) }
        guard let decoder = self.decoder else { return }
        decoderHoldsPictures = false
        decoder.release(parameterSets: stage.parameterSets?.allUnits ?? [])
        repairBuffer.reset()
        gate.restart(atMicros: now)
        MemoryPolicy.giveBackFreedMemory()
        metrics.add(.decoderReleases)
        Log.info(String(format: "%@: no data for %.0f s: decoder closed, its memory given back (it reopens with the next data)",
                        source.label, Double(after) / 1e6))
    }

    private func replaceDecoder(with d: any VideoDecoding) {
        publish()
        metrics.retire(group: .decoder)
        decoder = d
    }

    /// A new sender on the same input: start over, keeping parameter sets for the decoder.
    private func restart(_ reason: String) {
        metrics.add(.resets)
        Log.info("\(reason): resetting the decoder")
        stage.discardPending()
        repairBuffer.reset()
        try? decoder?.reset(parameterSets: stage.parameterSets?.allUnits ?? [])
        decoderSawDamage = false
        gate.restart(atMicros: clock.nowMicros())
        live = false
        status.set(.waitingForPicture)
    }

    /// A new connection starts the byte stream over: no continuity counter, partial packet or
    /// framing of the last sender's carries over to it (its counts stay in the totals).
    private func newDepacketizer() {
        publish()
        metrics.retire(group: .depacketizer)
        depacketizer = AutoDepacketizer(settings: options.depacketizer, datagrams: source.deliversDatagrams, idleFlushMicros: idleFlushMicros)
    }

    /// A camera reached only now (it was down when the feed started), or one that came back
    /// with another session: its SDP names the codec, payload type and parameter sets. Before
    /// any codec was chosen the access-unit stage starts over with it.
    private func takeAnnouncedSession() {
        guard followsAnnouncedSession, let sdp = source.announcedSession, sdp != options.sdp else { return }
        options.sdp = sdp
        if decoder == nil { stage = AccessUnitStage(settings: options.assembly) }
    }

    /// The byte stream broke off: what is pending is complete; the next sender starts over.
    private func senderLeft(_ now: UInt64) {
        depacketizer.finish(nowMicros: now) { events.append($0) }
        metrics.add(.disconnects)
        Log.info("\(source.label): sender disconnected; \(source.acceptsNextSender ? "waiting for the next one" : "reconnecting")")
        live = false
        status.set(.reconnecting)
    }

    private func endOfInput() {
        route()
        let now = clock.nowMicros()
        if reachedFrameLimit {
            // Decoded already (per NAL) or not needed: close it so that the counts agree.
            stage.end(by: .endOfStream, atMicros: now, minimumSlices: nil) { stageEvents.append($0) }
            for case .accessUnit(let au, _) in stageEvents { gate.noteDecodedPerNAL(au) }
            stageEvents.removeAll()
        } else if !stop.isSet {
            depacketizer.finish(nowMicros: now) { events.append($0) }
            route()
            decoder?.drain { deliver($0) }
        }
    }

    private var reachedFrameLimit: Bool {
        guard let max = options.maxFrames else { return false }
        return framesDecoded >= max
    }

    private func publish() {
        let s = source.counters
        metrics.publish(group: .source, [.datagrams: s.datagrams, .bytes: s.bytes, .emptyDatagrams: s.emptyDatagrams,
                                          .truncatedDatagrams: s.truncatedDatagrams, .connections: s.connections,
                                          .disallowed: s.disallowed, .otherSender: s.otherSender, .senderTakeovers: s.senderTakeovers, .malformedRTCP: s.notRTCP])
        if let l = s.srt { publishSRT(l) }
        metrics.publish(group: .depacketizer, depacketizer.counts)
        metrics.publish(group: .assembly, stage.counts)
        metrics.publish(group: .gate, gate.counts)
        if let d = decoder {
            metrics.publish(group: .decoder, [.decodeErrors: d.counters.decodeErrors, .concealedFrames: d.counters.concealedFrames,
                                               .decoderOpens: d.counters.opens])
        }
        if let f = stage.parameterSets?.latestFormat { metrics.setFormat(codec: nil, format: "\(f.codec.displayName) \(f)") }
        if let framing = depacketizer.framing { metrics.setTransport(framing) }
    }

    /// SRT's statistics: its counts, and its drops (too late to play: their bytes never come) as loss.
    private func publishSRT(_ l: SRTStatistics) {
        metrics.publish(group: .srt, [.srtPacketsLost: l.packetsLost, .srtPacketsRetransmitted: l.packetsRetransmittedReceived,
                                       .srtPacketsDropped: l.packetsDroppedReceiving, .packetsLost: l.packetsDroppedReceiving])
        metrics.setSRT(l)
    }
}
