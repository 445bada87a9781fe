import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed
import SpyglassDisplay
#endif

/// One feed of `play`: its pipeline, the sink chain in front of the window or headless end, and
/// the files it writes.
///
/// The framemd5 file and the flight recorder belong to the feed's thread: it closes them when
/// the feed ends and leaves what went wrong in ``report`` for the summary.
public final class PlayFeed {
    let n: Int
    let url: SourceURL
    /// The tile label: `name=` from the wall file, else the source.
    let name: String
    /// `--target-ms` from the wall file: the glass-to-glass target, ms.
    let targetMillis: Double?
    /// The feed's pipeline (its own thread, state, registry).
    public let pipeline: Pipeline
    /// The per-frame timing (`--latency-log`, and bench's samples); nil when neither asked for it.
    public let latency: LatencyRecorder?
    let recording: RecordingSource?
    /// The hand-off to the window (nil when headless).
    let slot: FrameSlot?
    /// The window to wake when a picture is ready (set while the window runs).
    let wakeTarget = WakeTarget()
    /// Shrinks pictures for the feed's wall tile on its own thread (aimed only by a wall).
    let prescaler: TilePrescaler
    /// Errors and notes from the feed's outputs, written by the feed's thread as it ends.
    let report = OutputReport()
    var snapshotFailed = false
    /// `--record` writes this feed (a REC tag on its picture).
    let isRecording: Bool
    /// `--mavlink`: the vehicle's telemetry (started with the pipeline, stopped at its end).
    let telemetry: TelemetryLink?
    /// A replay's `.tlog`, drawn in step with the pictures.
    let telemetryReplay: TLogReplay?
    /// The platform the stream's KLV describes (the OSD when there is no MAVLink input).
    let klv = KLVTelemetry()
    /// `--bundle`: the last seconds of what arrived, for a bug bundle.
    let bundleRing: BundleRing?
    private let recordUnwritable: Bool
    private let paths: (md5: String?, latency: String?, summary: String?)

    /// Opens the feed's outputs and builds its pipeline (not started).
    /// - Throws: ``SourceError/open(_:)`` when an output file cannot be written.
    init(n: Int, url: SourceURL, source: sending ByteSource, options: PlayOptions, windowed: Bool) throws {
        self.n = n
        self.url = url
        paths = (OutputPaths.expand(options.framemd5Path, feed: n), OutputPaths.expand(options.latencyLogPath, feed: n),
                 OutputPaths.expand(options.summaryPath, feed: n))
        let md5 = try paths.md5.map { try FrameMD5Writer(path: $0) }
        for path in [paths.summary, windowed ? options.snapshotPath : nil].compactMap({ $0 }) { try OutputFile(path: path).close() }
        let latency = try LatencyRecorder(logPath: paths.latency, maxSamples: options.keepLatencySamples ? 1_000_000 : 0)
        self.latency = latency
        recording = source as? RecordingSource
        let record = Self.recordingPath(OutputPaths.expand(options.recordPath, feed: n))
        let (flight, unwritable) = Self.flightRecorder(record, options)
        recordUnwritable = unwritable
        isRecording = flight != nil
        telemetry = try options.mavlink.map {
            try TelemetryLink(endpoint: $0, tlogPath: flight != nil ? record.map(TLogWriter.path(besideRecording:)) : nil)
        }
        telemetryReplay = options.replayTelemetry
        flight?.telemetry = telemetry
        let slot = windowed ? FrameSlot() : nil
        self.slot = slot
        let ring = options.bundleFolder.map { _ in BundleRing(seconds: options.bundleSeconds) }
        bundleRing = ring
        var observers = Self.observers(recording: flight, bundle: ring, klv: klv, report: report)
        let metrics = MetricsRegistry()
        let prescaler = TilePrescaler()
        self.prescaler = prescaler
        let wake = wakeTarget
        let end: any FrameSink = slot.map { WindowSink(slot: $0, metrics: metrics, latency: latency, prescaler: prescaler, wake: wake) }
            ?? HeadlessSink(metrics: metrics, latency: latency)
        var chain = Self.sinkChain(url: url, options: options, md5: md5, metrics: metrics, latency: latency, report: report, end: end)
        if let recording { chain = ReplayTimeline(recording: recording, metrics: metrics, next: chain) }
        var receiver = options.receiver
        receiver.mpegtsSelection = url.mpegtsSelection ?? MPEGTSSelection()
        pipeline = Pipeline(id: n, source: source, options: receiver, metrics: metrics, sink: chain, observers: observers)
        name = options.feedName ?? pipeline.label
        // The overlay and the tile's chip colour against one target: 100 ms unless given.
        targetMillis = options.targetMillis ?? 100
    }

    /// What the feed's pipeline tells its outputs: each access unit (and its repair) to the
    /// recorder and the bug bundle's ring, raw input to the ring, KLV to the recorder and the OSD,
    /// and at the end the recorder's closing line.
    private static func observers(recording flight: (any FlightRecorder)?, bundle ring: BundleRing?, klv: KLVTelemetry,
                                  report: OutputReport) -> FeedObservers {
        var observers = FeedObservers()
        if let flight {
            // The wall-clock time of the access unit's last byte: replay maps recorded times with it.
            let wall = { (au: AccessUnit) -> UInt64 in
                let now = MonotonicClock.nowMicros()
                return MonotonicClock.wallMicros() - (now > au.lastByteMicros ? now - au.lastByteMicros : 0)
            }
            observers.accessUnit = { au, store in flight.record(au, store: store, wallMicros: wall(au)) }
            observers.accessUnitRepaired = { au, store in flight.replace(au, store: store, wallMicros: wall(au)) }
            observers.end = { _ in
                flight.close()
                if flight.error != nil { report.fail(nil) } else if flight.files.isEmpty {
                    report.note("recorded nothing: no picture a recording can start from arrived")
                } else {
                    report.note("recorded \(flight.accessUnits) access units, \(flight.bytes) bytes to \(flight.files.joined(separator: ", "))"
                                + (flight.rewritten > 0 ? " (\(flight.rewritten) rewritten with a repaired NAL unit)" : "") + flight.detail)
                }
            }
        }
        if let ring {
            observers.rawInput = { ring.keep($0, arrivalMicros: $1) }
            let recorded = observers.accessUnit
            observers.accessUnit = { au, store in
                recorded?(au, store)
                if au.isJoinPoint { ring.markRandomAccess(atMicros: au.firstByteMicros) }
            }
        }
        observers.metadata = { m in
            flight?.note(m)
            klv.note(m)
        }
        return observers
    }

    /// The frames' way from the decoder to `end` (the window's slot or the headless count): the
    /// taps (capture clock, `--framemd5`, `--clock`), then the damage filter.
    private static func sinkChain(url: SourceURL, options: PlayOptions, md5: sending FrameMD5Writer?,
                                  metrics: MetricsRegistry, latency: LatencyRecorder, report: OutputReport, end: sending any FrameSink) -> sending any FrameSink {
        // A file's stamps are as old as the file: put them on our clock relative to its first
        // picture (unless an offset was given), rather than name a clock offset that is its age.
        let fromThePast = url.isFile && options.captureClock == .absolute(offsetMicros: 0)
        var taps: [any FrameTap] = [CaptureClockTap(mode: fromThePast ? .relative : options.captureClock, metrics: metrics)]
        if let md5 { taps.append(FrameMD5Tap(writer: md5, onFailure: { report.fail($0) })) }
        if options.clock { taps.append(OpticalTimeCodeTap()) }
        var chain: any FrameSink = DamageFilter(showDamaged: options.showDamaged, metrics: metrics, latency: latency, next: end)
        if !taps.isEmpty { chain = FrameTee(taps: taps, next: chain) }
        return chain
    }

    /// `--record`: a flight recorder, or nil with a one-line error when its folder is not writable
    /// (viewing goes on without it; the exit status says so).
    /// `--record NAME` as it will be written: an earlier recording is never overwritten
    /// (``RecordingName/unused(_:exists:)``), and the user is told the name it takes instead.
    private static func recordingPath(_ asked: String?) -> String? {
        guard let asked else { return nil }
        let dir = FilePath.folder(asked)
        guard access(dir.isEmpty ? "." : dir, W_OK) == 0 else { return asked }   // said once, by flightRecorder
        let path = RecordingName.claim(asked)
        if path != asked {
            let file = recordsRawStream(path) ? path : ContainerRecorder.fileName(for: path)
            Log.info("--record \(asked): a recording by that name exists; recording into \(file) instead (nothing is overwritten)")
        }
        return path
    }

    private static func flightRecorder(_ path: String?, _ options: PlayOptions) -> ((any FlightRecorder)?, unwritable: Bool) {
        guard let path else { return (nil, false) }
        let dir = FilePath.folder(path)
        guard access(dir.isEmpty ? "." : dir, W_OK) == 0 else {
            Log.error("--record \(path): folder '\(dir.isEmpty ? "." : dir)' is not writable (\(String(cString: strerror(errno)))); playing without recording")
            return (nil, true)
        }
        return (makeFlightRecorder(path: path, splitBytes: options.recordSplitBytes, splitMicros: options.recordSplitMicros), false)
    }

    /// No window after all: take the pictures of `feeds` from their slots as a headless sink
    /// would, round robin, until every feed has ended.
    static func drainHeadless(_ feeds: [PlayFeed]) {
        var open = feeds.filter { $0.slot != nil }
        while !open.isEmpty {
            open = open.filter { f in
                guard let slot = f.slot else { return false }
                if var frame = slot.take() {
                    frame.timing.presentedMicros = MonotonicClock.nowMicros()
                    PresentationStamps.record(frame, metrics: f.pipeline.metrics, latency: f.latency)
                    return true
                }
                if slot.isClosed && !slot.hasFrame { return false }
                _ = f.pipeline.join(timeoutMicros: 5_000 / open.count)
                return true
            }
        }
    }

    /// After the feed ended: closes the files, prints the summary line, writes the JSON.
    /// - Returns: the feed's exit status (0 fine, 1 an error).
    func close(options: PlayOptions) -> Int32 {
        if let leftover = slot?.take() {
            PresentationStamps.recordDropped(leftover, metrics: pipeline.metrics, latency: latency)
        }
        latency?.close()
        if let t = telemetry {
            t.stop()
            Log.info(Self.telemetryLine(t))
        }
        if options.bundleFolder != nil { writeBundle(options) }
        var status: Int32 = snapshotFailed || recordUnwritable || report.failed ? 1 : 0
        for line in report.notes { Log.info(line) }
        let summary = pipeline.summary
        writeStandardError(summary.line(name: name) + "\n")
        if let path = paths.summary {
            if !Self.writeFully(path, Self.summaryJSON(summary, telemetry: telemetry)) { status = 1 }
        }
        if let r = latency, r.writeFailed {
            Log.error("\(paths.latency ?? ""): write failed: \(r.writeError ?? "")")
            status = 1
        }
        if let error = pipeline.error { Log.error(error); return 1 }
        // A file stopped by Ctrl-C before its first picture found nothing wrong with the file.
        if summary.framesDecoded == 0 && !url.deliversInRealTime && !pipeline.isStopping {
            Log.error(Self.nothingDecoded(summary))
            return 1
        }
        return status
    }

    /// `--summary`'s JSON: the feed's summary, with a `mavlink` member (``TelemetryProbe/Report``)
    /// when the feed had a MAVLink input.
    static func summaryJSON(_ summary: FeedSummary, telemetry: TelemetryLink?) -> Data {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? enc.encode(summary) else { return Data() }
        guard let t = telemetry, var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let link = try? JSONSerialization.jsonObject(with: enc.encode(TelemetryProbe.report(t, seconds: summary.durationSeconds))) else { return data }
        object["mavlink"] = link
        return (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? data
    }

    /// `--bundle DIR`: writes a bug bundle of what arrived last (``BugBundle``); says where, or why not.
    func writeBundle(_ options: PlayOptions) {
        guard let ring = bundleRing, let folder = OutputPaths.expand(options.bundleFolder, feed: n) else { return }
        do {
            Log.info("bug bundle: \(try BugBundle.write(ring, label: name, url: url, summary: pipeline.summary, into: folder))")
        } catch {
            Log.error("\(error)")
        }
    }

    /// The summary of a feed's MAVLink input: the vehicle, what came, what was dropped.
    static func telemetryLine(_ t: TelemetryLink) -> String {
        let tm = t.telemetry, c = t.counters
        let vehicle = tm.systemID.map { id in
            ["system \(id)", tm.autopilot.map { TelemetryProbe.autopilotName($0.value) }, tm.vehicleType.map { TelemetryProbe.typeName($0.value) },
             tm.modeName.map { "last mode \($0.value)" }].compactMap { $0 }.joined(separator: ", ")
        } ?? (t.problem.map { "no vehicle heard (\($0))" } ?? "no vehicle heard")
        var line = "mavlink \(t.endpoint): \(vehicle); \(c.framesGood) frames, \(c.crcErrors) CRC errors, \(c.unknownMessages) unknown messages"
        let drops = [(c.truncatedFrames, "truncated"), (c.badLengths, "with a bad length"), (c.badIncompatFlags, "with unknown flags"),
                     (c.bytesSkipped, "bytes skipped"), (tm.otherVehicleFrames, "from another vehicle"),
                     (tm.framesBeforeLock, "before any autopilot HEARTBEAT (not shown)"), (tm.implausibleValues, "impossible values dropped")]
        for (n, what) in drops where n > 0 { line += ", \(n) \(what)" }
        if t.reconnects > 0 { line += ", reopened \(t.reconnects) times" }
        if let path = t.tlogPath { line += t.tlogFailed ? "; telemetry log \(path) stopped at a failed write" : "; telemetry log \(path)" }
        return line
    }

    private static func nothingDecoded(_ s: FeedSummary) -> String {
        if s.refusedAccessUnits > 0 {
            return "\(s.source): every picture's SPS is over the picture-size cap (--max-size, default \(PictureSizeCap.default.width)x\(PictureSizeCap.default.height))"
        } else if s.accessUnits > 0 {
            return "\(s.source): \(s.accessUnits) \(s.codec ?? "") access units found but no picture could be decoded (\(s.decodeErrors) decode errors)"
        }
        return "\(s.source): no H.264/H.265 video found (\(s.bytes) bytes read, \(s.nalUnits) NAL units)"
    }

    /// Writes `data` to `path`; reports a short write (full disk) as an error.
    private static func writeFully(_ path: String, _ data: Data) -> Bool {
        do {
            let f = try OutputFile(path: path)
            f.write([UInt8](data))
            f.close()
            if f.failed { Log.error("\(path): write failed: \(f.error ?? "")"); return false }
            return true
        } catch {
            Log.error("\(error)")
            return false
        }
    }
}

/// What a feed's outputs say when they close (written on the feed's thread, read after it ended).
final class OutputReport: Sendable {
    private let state = Mutex<(failed: Bool, notes: [String])>((false, []))
    /// An output failed; `line` (if any) is logged as an error at once.
    func fail(_ line: String?) {
        if let line { Log.error(line) }
        state.withLock { $0.failed = true }
    }
    /// A line for the log at the end.
    func note(_ line: String) { state.withLock { $0.notes.append(line) } }
    var failed: Bool { state.withLock { $0.failed } }
    var notes: [String] { state.withLock { $0.notes } }
}
