import Foundation
import SpyglassCore
#if canImport(Glibc)
import Glibc
#endif

/// `spyglass play`: a receiver on its own thread, the window (or headless sink) on the main thread.
final class PlaySession: @unchecked Sendable {
    let url: SourceURL
    var options: PlayOptions
    private let slot = FrameSlot()
    private let finished = StopFlag()
    private var framemd5: FrameMD5Writer?
    private var displayed = 0
    private var hiddenDamaged = 0
    private let lock = NSLock()
    private var signalSources: [DispatchSourceSignal] = []
    private var runError: Error?
    private var snapshotFailed = false

    /// Per-frame timing (always kept: it feeds the summary and `bench`).
    private(set) var recorder: LatencyRecorder?
    /// Called on the main thread about every 100 ms while running (bench's progress bar).
    var onTick: (() -> Void)?
    /// The receiver, once running (bench stops it when its sender is done).
    private(set) var receiver: Receiver?

    init(url: SourceURL, options: PlayOptions) {
        self.url = url
        self.options = options
    }

    /// Runs to the end; returns the process exit status.
    func run(openedSource: ByteSource? = nil) -> Int32 {
        Log.setQuiet(options.quiet)
        VideoDecoder.setLibraryLogging(verbose: options.verbose)
        let source: ByteSource
        do {
            source = try openedSource ?? openSource(url, options: options.receiver)
        } catch {
            Log.error("\(error)")
            return 1
        }
        if let path = options.framemd5Path {
            do { framemd5 = try FrameMD5Writer(path: path) } catch { Log.error("\(error)"); return 1 }
        }
        // Output paths are checked before playing, not found unwritable at the end.
        for path in [options.summaryPath, options.snapshotPath].compactMap({ $0 }) {
            do { try OutputFile(path: path).close() } catch { Log.error("\(error)"); return 1 }
        }
        var recordUnwritable = false
        if let path = options.recordPath {
            // Say at once when the recording cannot be written; viewing goes on without it.
            let dir = (path as NSString).deletingLastPathComponent
            if access(dir.isEmpty ? "." : dir, W_OK) != 0 {
                Log.error("--record \(path): folder '\(dir.isEmpty ? "." : dir)' is not writable (\(String(cString: strerror(errno)))); playing without recording")
                recordUnwritable = true
            }
        }
        do { recorder = try LatencyRecorder(logPath: options.latencyLogPath) } catch { Log.error("\(error)"); return 1 }
        let receiver = Receiver(source: source, options: options.receiver)
        self.receiver = receiver
        var flightRecorder: Recorder?
        if let path = options.recordPath, !recordUnwritable {
            let r = Recorder(path: path, splitBytes: options.recordSplitBytes, splitMicros: options.recordSplitMicros)
            flightRecorder = r
            receiver.accessUnitObserver = { au, store in
                // The wall-clock time of the access unit's last byte: replay maps recorded times with it.
                let now = MonotonicClock.nowMicros()
                let wall = MonotonicClock.wallMicros() - (now > au.lastByteMicros ? now - au.lastByteMicros : 0)
                r.record(au, parameterSets: store.allUnits, wallMicros: wall)
            }
        }
        installSignalHandler(receiver)

        var display: SDLDisplay?
        if options.display == .none && options.snapshotPath != nil {
            Log.info("warning: --snapshot needs the window; it is ignored with --display none")
        }
        if options.display == .sdl {
            let env = ProcessInfo.processInfo.environment
            if env["DISPLAY"] == nil && env["WAYLAND_DISPLAY"] == nil && env["SDL_VIDEODRIVER"] == nil {
                Log.info("no display (DISPLAY is unset): decoding headless; run under xvfb-run to see the window")
                options.display = .none
            } else {
                do {
                    // SDL lives on the main thread: one video system for the process, one window.
                    display = try MainActor.assumeIsolated {
                        let display = try SDLDisplay(system: SDLVideoSystem(), title: title(source, state: "waiting"),
                                                     width: options.windowSize?.width ?? 960,
                                                     height: options.windowSize?.height ?? 540, vsync: options.vsync,
                                                     position: options.windowPosition)
                        display.captureReadback = options.snapshotPath != nil
                        display.showClock = options.clock
                        display.showMessage(["Waiting for video…", "from \(source.label)"])
                        Log.info("window open (SDL renderer: \(display.rendererName))")
                        return display
                    }
                } catch {
                    Log.info("\(error): decoding headless")
                    options.display = .none
                }
            }
        }

        let md5 = framemd5
        let recorder = self.recorder
        let clock = options.clock
        let replay = source as? RecordingSource
        let headless = display == nil
        let window = display
        let thread = Thread { [self] in
            do {
                try receiver.run { frame in
                    if let replay, let (entry, hidden) = replay.entry(forAccessUnit: frame.accessUnitIndex) {
                        if hidden { return }   // before a seek target: decoded for its references only
                        frame.replayEntry = entry   // the latency log uses the recorded arrival and capture
                    }
                    md5?.write(frame)
                    if clock {
                        // A camera filming our own clock strip: the code at the bottom of its picture.
                        let y = frame.height - TimeCode.stripHeight(width: frame.width)
                        frame.timing.opticalWallMicros = frame.readTimeCode(y: y) ?? 0
                    }
                    if frame.damaged && !self.options.showDamaged {
                        // Hold the last clean picture; the concealed one is counted as dropped.
                        recorder?.record(frame, dropped: true)
                        self.lock.lock(); self.hiddenDamaged += 1; self.lock.unlock()
                        return
                    }
                    if headless {
                        frame.timing.presentedMicros = MonotonicClock.nowMicros()
                        recorder?.record(frame, dropped: false)
                        self.lock.lock(); self.displayed += 1; self.lock.unlock()
                    } else {
                        if let old = self.slot.put(frame) { recorder?.record(old, dropped: true) }
                        window?.wake()
                    }
                }
            } catch {
                self.lock.lock(); self.runError = error; self.lock.unlock()
            }
            self.finished.set()
            self.slot.close()
            if !headless { window?.wake() }
        }
        thread.stackSize = 4 << 20
        thread.start()

        if let display {
            MainActor.assumeIsolated { runWindow(display, receiver: receiver, source: source) }
        } else {
            while !finished.isSet { usleep(20_000); onTick?() }
        }
        while !finished.isSet { usleep(5_000) }

        framemd5?.close()
        lock.lock()
        let leftover = slot.take()
        if let leftover { recorder?.record(leftover, dropped: true) }
        receiver.setDisplayCounts(displayed: displayed, dropped: slot.dropped + (leftover != nil ? 1 : 0) + hiddenDamaged)
        lock.unlock()
        recorder?.close()
        var recordFailed = recordUnwritable
        if let rec = flightRecorder {
            rec.close()
            recordFailed = rec.error != nil
            if rec.error == nil {
                Log.info("recorded \(rec.accessUnits) access units, \(rec.bytes) bytes to \(rec.files.joined(separator: ", "))")
            }
        }
        let summary = receiver.summary
        writeStandardError(summary.line + "\n")
        var status: Int32 = 0
        if let path = options.summaryPath {
            let enc = JSONEncoder()
            enc.outputFormatting = [.prettyPrinted, .sortedKeys]
            if !writeFully(path, (try? enc.encode(summary)) ?? Data()) { status = 1 }
        }
        if let r = recorder, r.writeFailed {
            Log.error("\(options.latencyLogPath ?? ""): write failed: \(r.writeError ?? "")")
            status = 1
        }
        if let md5 = framemd5, md5.writeFailed {
            Log.error("\(options.framemd5Path ?? ""): write failed (disk full?)")
            status = 1
        }
        if snapshotFailed || recordFailed { status = 1 }
        if let runError { Log.error("\(runError)"); return 1 }
        if summary.framesDecoded == 0 && !url.isLive {
            if summary.refusedAccessUnits > 0 {
                Log.error("\(source.label): every picture's SPS is over the picture-size cap (--max-size, default 8192x4320)")
            } else if summary.accessUnits > 0 {
                Log.error("\(source.label): \(summary.accessUnits) \(summary.codec ?? "") access units found but no picture could be decoded (\(summary.decodeErrors) decode errors)")
            } else {
                Log.error("\(source.label): no H.264/H.265 video found (\(summary.bytes) bytes read, \(summary.nalUnits) NAL units)")
            }
            return 1
        }
        return status
    }

    @MainActor private func runWindow(_ display: SDLDisplay, receiver: Receiver, source: ByteSource) {
        var playing = false
        var lastFormat = ""
        var lastTick = MonotonicClock.nowMicros()
        let started = lastTick
        var lastPresented: UInt64 = 0
        var stalled = false
        while true {
            let now = MonotonicClock.nowMicros()
            if now - lastTick > 100_000 {
                onTick?()
                lastTick = now
                if let rec = source as? RecordingSource {
                    let p = rec.progress
                    let line = String(format: "%@ %6.1f / %.1f s  frame %d / %d  %.2fx", p.paused ? "⏸" : "▶",
                                      p.position, p.duration, p.frame, p.frames, p.speed)
                    display.setProgress(fraction: p.duration > 0 ? p.position / p.duration : 0, text: line)
                    if isatty(2) != 0 { writeStandardError("\r" + line + "   ") }
                    if p.paused { display.redraw() }
                }
                if showStats && !stalled {
                    display.setOverlay(statsLines(receiver.summary))
                    display.redraw()
                }
                if url.isLive {
                    let s = receiver.summary
                    if lastPresented == 0 {
                        // Still waiting: say for how long and what has arrived.
                        display.showMessage(["Waiting for video…", "from \(source.label)",
                                             String(format: "%.0f s, %d datagrams, %d bytes", Double(now - started) / 1e6, s.datagrams, s.bytes)])
                    } else if Double(now - lastPresented) / 1000 >= options.stallMillis {
                        // A frozen picture must not look live.
                        let age = Double(now - lastPresented) / 1e6
                        display.setOverlay([String(format: "STALLED: last frame %.1f s ago", age),
                                            s.disconnects > s.resets ? "sender disconnected" : "no data from \(source.label)"])
                        display.redraw()
                        if !stalled { display.setTitle(title(source, state: "stalled")); stalled = true }
                    }
                }
            }
            // With --clock the strip must stay current for a camera: redraw every 8 ms.
            let event = display.waitEvent(timeoutMillis: options.clock ? 8 : 100)
            if options.clock && event == nil { display.redraw() }
            switch event {
            case .quit?:
                receiver.stop.set()
                slot.close()
            case .toggleFullscreen?:
                display.toggleFullscreen()
            case .key(let sym)? where sym == Int32(UnicodeScalar("s").value):
                showStats.toggle()
                display.setOverlay(showStats ? statsLines(receiver.summary) : [])
                display.redraw()
            case .key(let sym)? where source is RecordingSource:
                // Replay keys: space pause, . step, ←/→ seek 5 s, [ ] speed.
                let rec = source as! RecordingSource
                switch sym {
                case 32: rec.togglePause()
                case 46: rec.step()
                case Int32(bitPattern: SDLKeys.left): rec.seek(by: -5)
                case Int32(bitPattern: SDLKeys.right): rec.seek(by: 5)
                case 91: rec.changeSpeed(by: 0.5)
                case 93: rec.changeSpeed(by: 2)
                default: break
                }
            case .redraw?:
                display.redraw()
            default:
                break
            }
            if let frame = slot.take() {
                if !playing && options.windowSize == nil {
                    let (sn, sd) = frame.sampleAspectRatio
                    display.fitWindow(width: frame.width * sn / max(1, sd), height: frame.height)
                }
                frame.timing.renderStartMicros = MonotonicClock.nowMicros()
                guard display.present(frame) else { recorder?.record(frame, dropped: true); continue }
                frame.timing.presentedMicros = MonotonicClock.nowMicros()
                lastPresented = frame.timing.presentedMicros
                if stalled { display.setOverlay(showStats ? statsLines(receiver.summary) : []); stalled = false; playing = false }
                recorder?.record(frame, dropped: false)
                lock.lock(); displayed += 1; lock.unlock()
                let fmt = "\(receiver.summary.codec ?? "") \(frame.width)x\(frame.height)"
                if !playing || fmt != lastFormat {
                    display.setTitle(title(source, state: "playing \(fmt)"))
                    playing = true
                    lastFormat = fmt
                }
            }
            if finished.isSet && slot.isClosed {
                if let frame = slot.take() {
                    frame.timing.renderStartMicros = MonotonicClock.nowMicros()
                    if display.present(frame) {
                        frame.timing.presentedMicros = MonotonicClock.nowMicros()
                        recorder?.record(frame, dropped: false)
                        lock.lock(); displayed += 1; lock.unlock()
                    }
                }
                break
            }
        }
        display.setTitle(title(source, state: "ended"))
        if let path = options.snapshotPath {
            if let rb = display.lastReadback {
                do { try writePPM(path: path, width: rb.width, height: rb.height, rgb: rb.rgb) }
                catch { Log.error("\(path): \(error.localizedDescription)"); snapshotFailed = true }
            } else {
                Log.error("--snapshot: no picture was presented")
                snapshotFailed = true
            }
        }
    }

    /// Writes `data` to `path`; reports a short write (full disk) as an error.
    private func writeFully(_ path: String, _ data: Data) -> Bool {
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

    private var showStats = false

    /// SDL key codes of the arrow keys (SDLK_LEFT/RIGHT = scancode | 1 << 30).
    enum SDLKeys {
        static let left: UInt32 = 0x4000_0050
        static let right: UInt32 = 0x4000_004F
    }

    /// The counters a person watching a link wants on screen (`s` toggles them).
    private func statsLines(_ s: ReceiverSummary) -> [String] {
        var lines = ["\(s.format ?? s.codec ?? "") · \(s.framesDecoded) decoded, \(s.framesDropped) dropped · decode p50 \(String(format: "%.1f", s.decodeMillisP50 ?? 0)) ms"]
        if s.rtp {
            lines.append("RTP: \(s.datagramsLost) lost, \(s.datagramsReordered) reordered, \(s.datagramsDuplicated) duplicated")
        }
        lines.append("damaged AUs \(s.damagedAccessUnits) · on damaged refs \(s.framesWithDamagedReferences) · concealed \(s.concealedFrames) · decode errors \(s.decodeErrors) · resets \(s.resets)")
        if s.picturesSplit + s.prematureIdleFlushes > 0 {
            lines.append("raw stream guesses: \(s.prematureIdleFlushes) NAL units cut, \(s.picturesSplit) pictures split")
        }
        var refused: [String] = []
        if s.disallowed > 0 { refused.append("\(s.disallowed) disallowed") }
        if s.truncatedDatagrams > 0 { refused.append("\(s.truncatedDatagrams) truncated") }
        if s.oversizeNALUnits + s.oversizeAccessUnits > 0 { refused.append("\(s.oversizeNALUnits + s.oversizeAccessUnits) oversize") }
        if s.emptyDatagrams > 0 { refused.append("\(s.emptyDatagrams) empty") }
        if !refused.isEmpty { lines.append(refused.joined(separator: " · ")) }
        return lines
    }

    private func title(_ source: ByteSource, state: String) -> String {
        "Spyglass — \(source.label) — \(state)"
    }

    /// Ctrl-C and SIGTERM stop the run cleanly: the summary is still printed and written.
    private func installSignalHandler(_ receiver: Receiver) {
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { [slot] in
                receiver.stop.set()
                slot.close()
            }
            s.resume()
            signalSources.append(s)
        }
    }
}
