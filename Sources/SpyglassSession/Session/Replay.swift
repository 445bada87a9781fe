import Foundation
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed
#endif

/// `spyglass replay` in the library: a recording made with `play --record`, every access unit at
/// its recorded arrival time (÷ speed), or a packet capture's UDP flow through the same pipeline
/// or back onto the network.
public enum Replay {
    /// What to replay and how (the command line's replay options).
    public struct What: Sendable {
        /// 0.25 to 4 times the recorded speed.
        public var speed: Double
        /// Start again at the end (recordings).
        public var loop: Bool
        /// Only seconds `fromSeconds` to `toSeconds` of a recording.
        public var fromSeconds: Double?, toSeconds: Double?
        /// A capture's UDP flow: to this port, from or to this host (nil: the busiest flow).
        public var port: UInt16?, host: String?
        /// Re-emit a capture's datagrams to this `udp://HOST:PORT` instead of playing them.
        public var sendTo: String?
        /// A window's replay ends with the recording (`--autoexit`) instead of holding its last
        /// picture until `q`.
        public var autoexit = false

        /// - Parameters: see the properties.
        public init(speed: Double, loop: Bool, fromSeconds: Double?, toSeconds: Double?, port: UInt16?, host: String?, sendTo: String?) {
            self.speed = speed; self.loop = loop; self.fromSeconds = fromSeconds; self.toSeconds = toSeconds
            self.port = port; self.host = host; self.sendTo = sendTo
        }
    }

    /// Replays `path` (`url` is its ``SourceURL``); a file with no index plays at its VUI rate
    /// (or `--fps`) times the speed.
    /// - Returns: the process exit status (1 after a one-line error).
    /// - Parameter shownAs: the name the feed goes by (a container demuxed into `path`).
    @MainActor public static func run(_ path: String, url: SourceURL, options: PlayOptions, _ w: What, shownAs: String? = nil) -> Int32 {
        let speed = w.speed, loop = w.loop, from = w.fromSeconds, to = w.toSeconds
        if case .unsupported(let why) = FileIdentity.of(path) {
            Log.error(why)
            return 1
        }
        if ContainerImport.replaysThrough(path) {
            // Through libavformat's demuxer into a recording of our own, with the file's timing;
            // libav's own lines only with --verbose (the import counts what it drops).
            VideoDecoder.setLibraryLogging(verbose: options.verbose)
            let streamPath: String
            do { streamPath = try ContainerImport.recording(of: path) } catch { Log.error("\(error)"); return 1 }
            defer { try? FileManager.default.removeItem(atPath: FilePath.folder(streamPath)) }
            Log.info("\(path): read through libavformat's demuxer, at its own time stamps")
            return run(streamPath, url: url, options: options, w, shownAs: path)
        }
        if PcapSource.isPacketCapture(path) {
            return capture(path, url: url, options: options, port: w.port, host: w.host, sendTo: w.sendTo, speed: speed)
        }
        guard RecordingIndex.load(streamPath: path) != nil else {
            // A plain Annex B file: play it at its VUI rate (or --fps), scaled by --speed.
            var o = options
            if speed != 1 { o.receiver.fps = (o.receiver.fps ?? 30) * speed }
            return PlaySession(urls: [url], options: o).run()
        }
        do {
            let source = try RecordingSource(streamPath: path, speed: speed, untimed: options.receiver.untimed, loop: loop,
                                             fromSeconds: from, toSeconds: to, label: shownAs,
                                             holdsAtEnd: options.display == .sdl && !w.autoexit)
            if source.index.repaired > 0 {
                Log.info("\(path): index repaired (\(source.index.repaired) torn or incomplete entries dropped)")
            }
            Log.info(String(format: "replaying %d access units (%.1f s) at %.2fx", source.index.entries.count, source.durationSeconds, speed))
            if let f = from, f > source.durationSeconds {
                Log.info(String(format: "warning: --from %.1f s is past the end (%.1f s): playing from the last keyframe", f, source.durationSeconds))
            }
            var o = options
            o.receiver.idleFlushMicros = max(o.receiver.idleFlushMicros, 1_000)
            o.replayTelemetry = telemetry(beside: shownAs ?? path, of: source, drawn: options.display == .sdl)
            return PlaySession(urls: [url], options: o).run(openedSource: source)
        } catch {
            Log.error("\(error)")
            return 1
        }
    }

    /// The `.tlog` beside a recording, when it can be drawn in step with it: read, not too large,
    /// and of the same time as the recording's pictures; otherwise one line says why not.
    static func telemetry(beside recording: String, of source: RecordingSource, drawn: Bool) -> TLogReplay? {
        guard let path = TLogWriter.existing(forRecording: recording) else { return nil }
        let walls = source.index.entries.map(\.wallMicros).filter { $0 > 0 }
        do {
            let log = try TLogReplay(path: path)
            if let first = walls.min(), let last = walls.max(), !log.overlaps(first...last) {
                Log.info("\(path): from another time than the recording's pictures: no OSD")
                return nil
            }
            Log.info("\(path): telemetry drawn in step with the pictures" + (drawn ? " (o hides it)" : ""))
            return log
        } catch {
            Log.info("\(error): no OSD")
            return nil
        }
    }

    /// `spyglass replay capture.pcap`: the chosen UDP flow through the same pipeline, with the
    /// original inter-packet timing, or re-emitted on the network with `--send`.
    @MainActor static func capture(_ path: String, url: SourceURL, options: PlayOptions, port: UInt16?, host: String?,
                                   sendTo: String?, speed: Double) -> Int32 {
        let source: PcapSource
        do {
            source = try PcapSource(path: path, port: port, host: host, speed: options.receiver.untimed ? 0 : speed)
        } catch {
            FileHandle.standardError.write(Data("spyglass: error: \(error)\n".utf8))
            return 1
        }
        let c = source.counts
        Log.info("\(path): \(c.packets) packets; flow \(source.flow?.description ?? "?") with \(source.schedule.count) datagrams"
                 + "; \(c.otherFlows) in other flows, \(c.nonUDP) not UDP, \(c.truncated) truncated, \(c.fragmentsReassembled) reassembled from fragments, \(c.fragmentsDropped) incomplete")
        if let sendTo {
            do {
                let sender = try StreamSender(destination: try SourceURL(parsing: sendTo))
                let start = MonotonicClock.nowMicros()
                let t0 = source.schedule.first?.time ?? 0
                for d in source.schedule {
                    if speed > 0 { MonotonicClock.sleep(untilMicros: start + UInt64(Double(d.time - t0) / speed)) }
                    sender.sendDatagrams([d.payload])
                }
                Log.info("re-sent \(sender.datagramsSent) datagrams to \(sendTo)")
                return 0
            } catch {
                Log.error("\(error)")
                return 1
            }
        }
        return PlaySession(urls: [url], options: options).run(openedSource: source)
    }
}
