import Foundation
import Synchronization
import SpyglassTransport
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
import SpyglassIngest
import SpyglassFeed
#endif

/// `spyglass probe` in the library: opens a SOURCE, runs its feed on the calling thread with
/// observers (to the end of a file or capture; for `duration` s of a live source), and returns
/// what ``StreamProbe`` made of it.
public enum ProbeRun {
    /// What a probe found.
    public struct Outcome {
        /// The source as it was opened.
        public let label: String
        /// An RTSP camera's SDP, two lines ("sdp video", "sdp other tracks"); empty otherwise.
        public let sdpLines: [String]
        /// The probe, finished: its ``StreamProbe/report`` and ``StreamProbe/text``.
        public let probe: StreamProbe
    }

    /// Why a probe could not run: the source could not be opened, or its feed failed (one line).
    public enum Failure: Error, CustomStringConvertible {
        case open(String), read(String)
        public var description: String { switch self { case .open(let s), .read(let s): return s } }
    }

    /// Probes `sourceText` (a URL, a file, a pcap or pcapng, `-`).
    /// - Parameters:
    ///   - options: the receive path's options (`--codec`, `--rtp`/`--raw`).
    ///   - duration: how long a live source is read, s.
    ///   - port/host: a packet capture's UDP flow.
    /// - Throws: ``Failure``.
    public static func run(sourceText: String, options: ReceiverOptions, duration: Double, port: UInt16?, host: String?) throws -> Outcome {
        var options = options
        Log.setQuiet(true)
        VideoDecoder.setLibraryLogging(verbose: false)
        let url: SourceURL
        let source: ByteSource
        var imported: String?
        defer { if let imported { try? FileManager.default.removeItem(atPath: FilePath.folder(imported)) } }
        do {
            url = try SourceURL(parsing: sourceText)
            options.mpegtsSelection = url.mpegtsSelection ?? MPEGTSSelection()
            if case .file(let path) = url, case .unsupported(let why) = FileIdentity.of(path) {
                throw SourceError.open(why)
            }
            if case .file(let path) = url, PcapSource.isPacketCapture(path) {
                source = try PcapSource(path: path, port: port, host: host, speed: 0)
            } else if case .file(let path) = url, ContainerImport.playsThrough(path) {
                // Matroska, MP4: the video through libavformat's demuxer, probed as its Annex B.
                imported = try ContainerImport.recording(of: path)
                source = try StreamFDSource.file(path: imported!)
            } else {
                source = try openSource(url, options: options.source)
            }
        } catch {
            throw Failure.open("\(error)")
        }
        // A pipe on stdin (a camera tool, ffmpeg) is live too: it may never end.
        let live = url.deliversInRealTime || (url == .stdin && standardInputIsAStream())
        if live { options.timeoutSeconds = duration }
        let label = imported == nil ? source.label : sourceText
        let pcapSpan = (source as? PcapSource).flatMap { pcap -> Double? in
            guard let a = pcap.schedule.first?.time, let b = pcap.schedule.last?.time, b > a else { return nil }
            return Double(b - a) / 1e6
        }
        let packetCapture = source is PcapSource
        var sdpLines: [String] = []
        if let rtsp = source as? RTSPSource {
            let d = rtsp.sessionDescription
            sdpLines.append("sdp video".padding(toLength: 22, withPad: " ", startingAt: 0)
                            + "\(d.codec?.displayName ?? "?"), payload type \(d.payloadType.map(String.init) ?? "?"), \(d.parameterSets.count) parameter sets in sprop-*")
            sdpLines.append("sdp other tracks".padding(toLength: 22, withPad: " ", startingAt: 0)
                            + (rtsp.otherTracks.isEmpty ? "none" : RTSPSource.list(rtsp.otherTracks) + " (not played)"))
            options.sdp = d
        }
        let gathered = ProbeState()
        let metrics = MetricsRegistry()
        let pipeline = Pipeline(id: 1, source: source, options: options, metrics: metrics,
                                sink: HeadlessSink(metrics: metrics, latency: nil), observers: gathered.observers())
        if live {
            DispatchQueue.global().asyncAfter(deadline: .now() + duration) { pipeline.stop() }
            FileHandle.standardError.write(Data("spyglass probe: reading \(label) for \(duration) s…\n".utf8))
        }
        pipeline.runHere()
        if let error = pipeline.error { throw Failure.read(error) }
        let state = gathered.state.withLock { $0 }
        var probe = state.probe
        probe.finish(summary: pipeline.summary, live: live || packetCapture, datagramSizes: state.sizes,
                     parameterSets: state.parameterSets, captureSpanSeconds: pcapSpan)
        return Outcome(label: label, sdpLines: sdpLines, probe: probe)
    }

    /// True when standard input is a pipe, a socket or a terminal rather than a regular file.
    static func standardInputIsAStream() -> Bool {
        var st = stat()
        guard fstat(0, &st) == 0 else { return false }
        return (st.st_mode & S_IFMT) != S_IFREG
    }

    /// What `probe` gathers from its feed's thread.
    final class ProbeState: Sendable {
        struct Gathered {
            var probe = StreamProbe()
            var sizes: [Int] = []
            var parameterSets: ParameterSetStore?
        }
        let state = Mutex(Gathered())

        /// Observers that fill ``state`` from the feed's thread.
        func observers() -> FeedObservers {
            var o = FeedObservers()
            o.accessUnit = { [self] au, store in state.withLock { $0.probe.observe(au, store: store) } }
            o.datagram = { [self] n in state.withLock { if $0.sizes.count < 1_000_000 { $0.sizes.append(n) } } }
            o.end = { [self] store in state.withLock { $0.parameterSets = store } }
            o.metadata = { [self] m in state.withLock { $0.probe.observe(metadata: m) } }
            return o
        }
    }
}
