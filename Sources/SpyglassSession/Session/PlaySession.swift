import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed
import SpyglassDisplay
#endif

/// `spyglass play`: one ``Pipeline`` per source, each on its own thread; the window (one feed)
/// or nothing (headless) on the main thread; then one summary line per feed.
@MainActor public final class PlaySession {
    let urls: [SourceURL]
    var options: PlayOptions
    /// Each feed's options (a wall file's lines); empty: every feed has ``options``.
    private let perFeed: [PlayOptions]
    /// Called on the main thread about every 100 ms while running (bench's progress bar).
    public var onTick: (() -> Void)?
    /// Headless, print a status line per feed while running (`play`; not `bench`, which has its
    /// own progress line). Off with `--quiet`, `--status 0`, and when a window showed the feeds.
    public var showsStatusLines = false
    /// A window (single or wall) was open: the feeds' state was on screen.
    private var windowShown = false
    /// The feeds, once running (bench reads the first one's latency log and stops it).
    public private(set) var feeds: [PlayFeed] = []
    /// What Ctrl-C stops: nil while the sources are being opened (then it exits at once).
    private let stopTargets = StopTargets()

    /// The feeds' pipelines and window slots, shared with the signal handlers' queue.
    final class StopTargets: Sendable {
        let value = Mutex<([Pipeline], [FrameSlot])?>(nil)
    }
    /// Feeds whose source could not be opened (several sources): number, label and why; the
    /// wall keeps their tiles, saying so.
    private var unopened: [(n: Int, name: String, reason: String)] = []

    /// - Parameters: urls: the sources; options: the command line's; perFeed: each feed's own
    ///   (same count as `urls`), or empty when all feeds share `options`.
    public init(urls: [SourceURL], options: PlayOptions, perFeed: [PlayOptions] = []) {
        self.urls = urls
        self.options = options
        self.perFeed = perFeed
    }

    /// Runs to the end; returns the process exit status.
    /// - Parameter openedSource: a source already opened (bench, replay), for a single feed.
    public func run(openedSource: sending ByteSource? = nil) -> Int32 {
        // A Matroska or MP4 file (a recording, a phone's, a drone's SD card): through libavformat's
        // demuxer at its own time stamps, with replay's keys (Replay).
        for url in urls {
            // A JPEG, a VP8 WebM, an MPEG-2 program stream: one line saying what it is.
            if openedSource == nil, case .file(let path) = url.transport, case .unsupported(let why) = FileIdentity.of(path) {
                Log.error(why)
                return 1
            }
        }
        if openedSource == nil, urls.count == 1, case .file(let path) = urls[0].transport, ContainerImport.playsThrough(path) {
            // `play` ends with the file, as it does for a raw stream (only `replay` holds the end).
            var what = Replay.What(speed: 1, loop: false, fromSeconds: nil, toSeconds: nil, port: nil, host: nil, sendTo: nil)
            what.autoexit = true
            return Replay.run(path, url: urls[0], options: options, what)
        }
        Log.setQuiet(options.quiet)
        Log.setNamesFeeds(urls.count > 1)
        VideoDecoder.setLibraryLogging(verbose: options.verbose)
        settleDisplay()
        installSignalHandlers()
        let failedToOpen: Bool
        do { failedToOpen = try openFeeds(openedSource) } catch { Log.error("\(error)"); return 1 }
        if feeds.isEmpty { return 1 }
        let targets = (feeds.map(\.pipeline), feeds.compactMap(\.slot))
        stopTargets.value.withLock { $0 = targets }
        let metricsServer: MetricsServer?
        do { metricsServer = try startMetrics() } catch { Log.error("\(error)"); return 1 }
        defer { metricsServer?.stop() }
        if options.display == .sdl, feeds.allSatisfy({ $0.slot != nil }) {
            // The window opens first (75–110 ms under Xvfb): a file's first pictures must not
            // wait in the slot meanwhile and be replaced.
            runWindow { for f in self.feeds { f.pipeline.start(); f.telemetry?.start() } }
        } else {
            for f in feeds { f.pipeline.start(); f.telemetry?.start() }
        }
        return max(failedToOpen ? 1 : 0, waitAndClose())
    }

    /// A snapshot needs a window: a single feed's, or the wall's.
    private func settleDisplay() {
        if options.display == .none && options.snapshotPath != nil {
            Log.info("warning: --snapshot needs the window; it is ignored with --display none")
        }
    }

    /// Opens every source and builds its feed. With several sources, one that cannot start is
    /// reported and the others go on.
    /// - Returns: true when a feed could not start.
    /// - Throws: ``SourceError`` for outputs that cannot be written, or a single source that fails.
    private func openFeeds(_ openedSource: sending ByteSource?) throws -> Bool {
        try OutputPaths.check(options, urls: urls)
        try OutputPaths.checkRecordings(urls.indices.map { $0 < perFeed.count ? perFeed[$0] : options })
        try OutputPaths.checkTelemetry(urls.indices.map { $0 < perFeed.count ? perFeed[$0] : options })
        let windowed = options.display == .sdl && DisplayCheck.available()
        if let openedSource, let url = urls.first {
            feeds.append(try PlayFeed(n: 1, url: url, source: openedSource, options: options, windowed: windowed))
            return false
        }
        var failed = false
        for (i, url) in urls.enumerated() {
            do {
                let source = try openSource(url, options: feedOptions(i).receiver.source, retryFirstConnection: urls.count > 1)
                feeds.append(try PlayFeed(n: i + 1, url: url, source: source, options: feedOptions(i), windowed: windowed))
            } catch where urls.count > 1 {
                Log.error("feed \(i + 1): \(error)")
                unopened.append((i + 1, feedOptions(i).feedName ?? url.description, "\(error)"))
                failed = true
            }
        }
        return failed
    }

    /// Feed `i`'s options (from 0). With at least as many feeds as cores, no feed takes slice
    /// threads on its own: every core already decodes a feed, and the threads' hand-offs only
    /// cost CPU (see the README's wall figures).
    private func feedOptions(_ i: Int) -> PlayOptions {
        var o = i < perFeed.count ? perFeed[i] : options
        if urls.count >= ProcessInfo.processInfo.activeProcessorCount { o.receiver.autoSliceThreads = false }
        return o
    }

    /// `--metrics`: serves every feed's registry.
    private func startMetrics() throws -> MetricsServer? {
        guard let m = options.metrics else { return nil }
        let pipelines = feeds.map(\.pipeline)
        let stall = UInt64(options.stallMillis * 1000)
        let links = feeds.compactMap { f in f.telemetry.map { ("\(f.pipeline.id) \(f.pipeline.label)", $0) } }
        let server = try MetricsServer(address: m.address, port: m.port) {
            let now = MonotonicClock.nowMicros()
            return MetricsExposition.text(pipelines.map { FeedMetrics(feed: "\($0.id) \($0.label)", state: $0.state, snapshot: $0.metrics.snapshot()) },
                                          nowMicros: now, stallMicros: stall)
                + TelemetryMetrics.text(links.map { TelemetryMetrics.Feed(feed: $0.0, telemetry: $0.1.telemetry, counters: $0.1.counters) }, nowMicros: now)
        }
        Log.info("metrics: http://\(m.address == "0.0.0.0" ? "localhost" : m.address):\(server.port)/metrics")
        return server
    }

    /// Waits for every feed, closing each (summary line, files) as soon as it ends.
    /// - Returns: the worst feed's exit status.
    private func waitAndClose() -> Int32 {
        var status: Int32 = 0
        var open = feeds
        let lines = showsStatusLines && !options.quiet && options.statusSeconds != 0 && !windowShown
            ? StatusLines(feeds: feeds.map { ($0.pipeline, $0.name) }, stallMillis: options.stallMillis, everySeconds: options.statusSeconds)
            : nil
        while !open.isEmpty {
            var still: [PlayFeed] = []
            for f in open {
                if f.pipeline.join(timeoutMicros: open.count == 1 ? 20_000 : 0) {
                    lines?.clear()
                    status = max(status, f.close(options: options))
                } else {
                    still.append(f)
                }
            }
            open = still
            if !open.isEmpty { if open.count > 1 { usleep(20_000) }; onTick?(); lines?.tick() }
        }
        return status
    }

    /// The window: a tile per feed (a single feed is a wall of one tile). Without a window the
    /// feeds go on headless.
    @MainActor private func runWindow(startFeeds: () -> Void) {
        var settings = WallWindow.Settings()
        settings.stallMillis = options.stallMillis
        settings.layout = options.layout
        settings.gravity = options.gravity
        settings.clock = options.clock
        settings.position = options.windowPosition
        settings.screenshotFolder = FileManager.default.currentDirectoryPath
        if let s = options.windowSize { settings.size = s } else if feeds.count == 1 { settings.size = (960, 540) }
        settings.fitToFirstPicture = feeds.count == 1 && options.windowSize == nil
        let single = feeds.count == 1 && unopened.isEmpty
        let running = feeds.map { f in
            // A single feed is drawn at full precision on the main thread (no prescaled copy).
            (f.n, WallFeed(pipeline: f.pipeline, slot: f.slot!, latency: f.latency, name: single ? f.pipeline.label : f.name,
                           live: f.url.deliversInRealTime, targetMillis: f.targetMillis, prescaler: single ? nil : f.prescaler,
                           recording: f.isRecording, replay: f.recording, telemetry: f.telemetry ?? f.telemetryReplay ?? f.klv))
        }
        let failed = unopened.map { ($0.n, WallFeed.failed(name: $0.name, reason: $0.reason)) }
        let tiles = (running + failed).sorted { $0.0 < $1.0 }
        let wallFeeds = tiles.map(\.1), tileNumbers = tiles.map(\.0)
        let wall: WallWindow
        do { wall = try WallWindow(system: SDLVideoSystem(), feeds: wallFeeds, settings: settings) } catch {
            Log.info("\(error): decoding headless")
            startFeeds()
            PlayFeed.drainHeadless(feeds)
            return
        }
        if single {
            Log.info("window open: pictures scaled by libswscale straight into the window surface")
        } else {
            Log.info("wall open: \(wallFeeds.count) feeds, \(wall.view.layout) grid")
        }
        windowShown = true
        wall.onTick = onTick
        wall.onBundle = { [feeds, options, tileNumbers] i in
            guard options.bundleFolder != nil else { return Log.info("b: no bug bundle without --bundle DIR") }
            let chosen = i.map { t in feeds.filter { $0.n == tileNumbers[t] } } ?? feeds
            // Written off the main thread (a capture, a probe of it): the pictures go on.
            let jobs = chosen.compactMap { f in f.bundleRing.map { ($0, f.name, f.url, f.pipeline.summary, OutputPaths.expand(options.bundleFolder, feed: f.n) ?? ".") } }
            Thread.detachNewThread {
                for (ring, name, url, summary, folder) in jobs {
                    do { Log.info("bug bundle: \(try BugBundle.write(ring, label: name, url: url, summary: summary, into: folder))") }
                    catch { Log.error("\(error)") }
                }
            }
        }
        for f in feeds { f.wakeTarget.aim(at: wall.waker) }
        startFeeds()
        wall.run()
        for f in feeds { f.wakeTarget.aim(at: nil) }
        if let path = options.snapshotPath {
            let failed = !Snapshot.write(wall, path: path)
            for f in feeds { f.snapshotFailed = failed }
        }
    }

    /// Ctrl-C and SIGTERM stop every feed cleanly: the summaries are still printed and written.
    /// A second one exits at once (a feed blocked writing to a FIFO nobody reads cannot stop);
    /// recordings are on disk as they arrive, so they lose nothing. (``StopSignals`` was
    /// installed first thing in `main`, so no signal is lost meanwhile.)
    private func installSignalHandlers() {
        StopSignals.install()
        let targets = stopTargets
        StopSignals.onSignal { sig, count in
            if count > 1 {
                writeStandardError("spyglass: second interrupt: exiting now (summaries not written)\n")
                _exit(128 + sig)
            }
            guard let (pipelines, slots) = targets.value.withLock({ $0 }) else {
                // Still opening the sources (an SRT or RTSP call can take seconds): nothing to save.
                writeStandardError("spyglass: interrupted while opening the sources\n")
                _exit(128 + sig)
            }
            writeStandardError("spyglass: stopping (interrupt again to exit at once)\n")
            for p in pipelines { p.stop() }
            for slot in slots { slot.close() }
        }
    }
}

/// Whether a window can be opened at all (a display to open it on).
enum DisplayCheck {
    static func available() -> Bool {
        let env = ProcessInfo.processInfo.environment
        if env["DISPLAY"] == nil && env["WAYLAND_DISPLAY"] == nil && env["SDL_VIDEODRIVER"] == nil {
            Log.info("no display (DISPLAY is unset): decoding headless; run under xvfb-run to see the window")
            return false
        }
        return true
    }
}

/// `--snapshot`: the whole window as PPM, as it was when it closed (a single feed's or a wall's).
enum Snapshot {
    @MainActor static func write(_ wall: WallWindow, path: String) -> Bool {
        guard let w = wall.windowPixels() else {
            Log.error("--snapshot: the wall window could not be read")
            return false
        }
        do { try writePPM(path: path, width: w.width, height: w.height, rgb: w.rgb); return true }
        catch { Log.error("\(path): \(error.localizedDescription)"); return false }
    }
}

/// Output paths of `play`, checked before anything plays (not found unwritable at the end).
enum OutputPaths {
    /// `{n}` in a path becomes the feed's number.
    static func expand(_ path: String?, feed n: Int) -> String? {
        path?.replacingOccurrences(of: "{n}", with: String(n))
    }

    /// With several feeds, every per-feed output needs `{n}` so that feeds do not share a file;
    /// no output may be an input or another output; stdin can be read by one feed only.
    /// Two feeds (a wall file's lines) must not record into one file, however its name is
    /// spelled (`dup` and `dup.mkv`, `./dup.mkv`).
    /// - Throws: ``SourceError/open(_:)`` naming both feeds.
    static func checkRecordings(_ feeds: [PlayOptions]) throws {
        if feeds.allSatisfy({ $0.recordPath == nil }), feeds.contains(where: { $0.recordSplitBytes > 0 || $0.recordSplitMicros > 0 }) {
            throw SourceError.open("--record-split-mb/--record-split-min split a recording: give --record NAME too")
        }
        var recordedBy: [String: Int] = [:]
        for (i, o) in feeds.enumerated() {
            guard let path = expand(o.recordPath, feed: i + 1) else { continue }
            guard !FilePath.name(path).isEmpty else {
                throw SourceError.open("--record '\(path)': give a file name (NAME.mkv, .ts, .mp4, or .h264 for the raw stream)")
            }
            for f in flightRecordingFiles(path: path).map(canonical) {
                if let other = recordedBy[f], other != i + 1 {
                    throw SourceError.open("--record \(path): feed \(i + 1) would write \(f), which feed \(other) records into")
                }
                recordedBy[f] = i + 1
            }
        }
    }

    /// Two feeds must not take one MAVLink endpoint (a command-line `--mavlink` applies to every
    /// feed): said before anything plays, not as "port in use" once it does.
    /// - Throws: ``SourceError/open(_:)`` naming both feeds.
    static func checkTelemetry(_ feeds: [PlayOptions]) throws {
        var takenBy: [MAVLinkEndpoint: Int] = [:]
        for (i, o) in feeds.enumerated() {
            guard let e = o.mavlink else { continue }
            if case .udpOut = e { continue }   // a socket each: a router answers each client
            if let other = takenBy[e] {
                throw SourceError.open("--mavlink \(e): feed \(i + 1) would read what feed \(other) reads; give each feed its own (a wall file's line takes --mavlink)")
            }
            takenBy[e] = i + 1
        }
    }

    static func check(_ o: PlayOptions, urls: [SourceURL]) throws {
        let feeds = urls.count
        let outputs = [("--framemd5", o.framemd5Path), ("--latency-log", o.latencyLogPath),
                       ("--record", o.recordPath), ("--summary", o.summaryPath), ("--snapshot", o.snapshotPath)]
        if feeds > 1 {
            for (flag, path) in outputs where flag != "--snapshot" {
                if let path, !path.contains("{n}") {
                    throw SourceError.open("\(flag) \(path): with \(feeds) sources the path needs {n} (the feed's number), for example 'out-{n}.md5'")
                }
            }
            if urls.filter({ $0 == .stdin }).count > 1 { throw SourceError.open("stdin (-) can be the source of one feed only") }
        }
        let inputs = Set(urls.compactMap { url -> String? in if case .file(let p) = url.transport { return canonical(p) }; return nil })
        var written: [String: String] = [:]
        for n in 1...max(1, feeds) {
            for (flag, path) in outputs {
                guard let path = expand(path, feed: n) else { continue }
                let files = flag == "--record" ? flightRecordingFiles(path: path) : [path]
                for f in files.map(canonical) {
                    if inputs.contains(f) { throw SourceError.open("\(flag) \(path) would overwrite an input file") }
                    if let other = written[f], other != flag { throw SourceError.open("\(flag) \(path) is also the \(other) file") }
                    written[f] = flag
                }
            }
        }
    }

    /// An absolute path with `.`/`..` and symbolic links resolved as far as the file exists.
    static func canonical(_ path: String) -> String {
        if let r = realpath(path, nil) { defer { free(r) }; return String(cString: r) }
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        if let r = realpath(dir, nil) { defer { free(r) }; return String(cString: r) + "/" + url.lastPathComponent }
        return url.standardizedFileURL.path
    }
}
