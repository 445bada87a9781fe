import Foundation
import SpyglassCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One feed of `play`: its pipeline, the sink chain in front of the window or headless end, and
/// the files it writes.
final class PlayFeed {
    let n: Int
    let url: SourceURL
    let pipeline: Pipeline
    let latency: LatencyRecorder?
    let recording: RecordingSource?
    /// The hand-off to the window (nil when headless).
    let slot: FrameSlot?
    /// The window to wake when a picture is ready (set while the window runs).
    let wakeTarget = WakeTarget()
    var snapshotFailed = false
    private let md5: FrameMD5Writer?
    private let flight: Recorder?
    private let recordUnwritable: Bool
    private let paths: (md5: String?, latency: String?, summary: String?)

    /// Opens the feed's outputs and builds its pipeline (not started).
    /// - Throws: ``SourceError/open(_:)`` when an output file cannot be written.
    init(n: Int, url: SourceURL, source: ByteSource, options: PlayOptions, windowed: Bool) throws {
        self.n = n
        self.url = url
        paths = (OutputPaths.expand(options.framemd5Path, feed: n), OutputPaths.expand(options.latencyLogPath, feed: n),
                 OutputPaths.expand(options.summaryPath, feed: n))
        md5 = try paths.md5.map { try FrameMD5Writer(path: $0) }
        for path in [paths.summary, windowed ? options.snapshotPath : nil].compactMap({ $0 }) { try OutputFile(path: path).close() }
        latency = try LatencyRecorder(logPath: paths.latency)
        recording = source as? RecordingSource
        var unwritable = false
        var flight: Recorder?
        if let path = OutputPaths.expand(options.recordPath, feed: n) {
            // Say at once when the recording cannot be written; viewing goes on without it.
            let dir = (path as NSString).deletingLastPathComponent
            if access(dir.isEmpty ? "." : dir, W_OK) != 0 {
                Log.error("--record \(path): folder '\(dir.isEmpty ? "." : dir)' is not writable (\(String(cString: strerror(errno)))); playing without recording")
                unwritable = true
            } else {
                flight = Recorder(path: path, splitBytes: options.recordSplitBytes, splitMicros: options.recordSplitMicros)
            }
        }
        self.flight = flight
        recordUnwritable = unwritable
        let end: (MetricsRegistry) -> any FrameSink
        let slot = windowed ? FrameSlot() : nil
        self.slot = slot
        let wake = wakeTarget
        var observers = FeedObservers()
        if let r = flight {
            observers.accessUnit = { au, store in
                // The wall-clock time of the access unit's last byte: replay maps recorded times with it.
                let now = MonotonicClock.nowMicros()
                let wall = MonotonicClock.wallMicros() - (now > au.lastByteMicros ? now - au.lastByteMicros : 0)
                r.record(au, parameterSets: store.allUnits, wallMicros: wall)
            }
        }
        let latency = self.latency
        if let slot {
            end = { WindowSink(slot: slot, metrics: $0, latency: latency, wake: { wake.wake() }) }
        } else {
            end = { HeadlessSink(metrics: $0, latency: latency) }
        }
        let metrics = MetricsRegistry()
        var taps: [any FrameTap] = []
        if let md5 { taps.append(FrameMD5Tap(writer: md5)) }
        if options.clock { taps.append(OpticalTimeCodeTap()) }
        var chain: any FrameSink = DamageFilter(showDamaged: options.showDamaged, metrics: metrics, latency: latency,
                                                next: end(metrics))
        if !taps.isEmpty { chain = FrameTee(taps: taps, next: chain) }
        if let recording { chain = ReplayTimeline(recording: recording, next: chain) }
        pipeline = Pipeline(id: n, source: source, options: options.receiver, metrics: metrics, sink: chain, observers: observers)
    }

    /// No window after all: take the pictures from the slot as a headless sink would.
    func drainHeadless() {
        guard let slot else { return }
        while !slot.isClosed || slot.hasFrame {
            if let f = slot.take() {
                f.timing.presentedMicros = MonotonicClock.nowMicros()
                PresentationStamps.record(f, metrics: pipeline.metrics, latency: latency)
            } else {
                _ = pipeline.join(timeoutMicros: 5_000)
            }
        }
    }

    /// After the feed ended: closes the files, prints the summary line, writes the JSON.
    /// - Returns: the feed's exit status (0 fine, 1 an error).
    func close(options: PlayOptions) -> Int32 {
        if let leftover = slot?.take() {
            latency?.record(leftover, dropped: true)
            pipeline.metrics.add(.framesDropped)
        }
        latency?.close()
        var status: Int32 = snapshotFailed || recordUnwritable ? 1 : 0
        if let rec = flight {
            rec.close()
            if rec.error != nil { status = 1 } else {
                Log.info("recorded \(rec.accessUnits) access units, \(rec.bytes) bytes to \(rec.files.joined(separator: ", "))")
            }
        }
        let summary = pipeline.summary
        writeStandardError(summary.line + "\n")
        if let path = paths.summary {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            if !Self.writeFully(path, (try? enc.encode(summary)) ?? Data()) { status = 1 }
        }
        if let r = latency, r.writeFailed {
            Log.error("\(paths.latency ?? ""): write failed: \(r.writeError ?? "")")
            status = 1
        }
        if let md5, md5.writeFailed {
            Log.error("\(paths.md5 ?? ""): write failed (disk full?)")
            status = 1
        }
        if let error = pipeline.error { Log.error(error); return 1 }
        if summary.framesDecoded == 0 && !url.isLive {
            Log.error(Self.nothingDecoded(summary))
            return 1
        }
        return status
    }

    private static func nothingDecoded(_ s: FeedSummary) -> String {
        if s.refusedAccessUnits > 0 {
            return "\(s.source): every picture's SPS is over the picture-size cap (--max-size, default 8192x4320)"
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

/// The window a feed wakes when a picture is ready; none while no window runs.
final class WakeTarget: Sendable {
    private let display = Mutex<SDLDisplay?>(nil)
    func set(_ d: SDLDisplay?) { display.withLock { $0 = d } }
    func wake() { SDLDisplay.wake() }
}
