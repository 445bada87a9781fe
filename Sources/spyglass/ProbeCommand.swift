import Foundation
import SpyglassCore
import Synchronization
#if canImport(Glibc)
import Glibc
import SpyglassBitstream
import SpyglassTransport
#endif

let probeUsage = """
usage: spyglass probe SOURCE [--duration S] [--json] [--codec h264|h265] [--rtp|--raw] [--port N] [--host H]

What a stream holds: codec, profile and level, size, bit depth and chroma, frame rate (VUI and
measured), GOP (keyframe interval, recovery points, intra refresh, open GOP), slices per picture,
B-frames and reorder depth, SEI types, time stamps, bitrate; for live sources datagram sizes and
RTP loss; and every error found. Files and packet captures (pcap/pcapng; --port/--host pick the
UDP flow) are read to the end; live sources for --duration (5 s).
"""

/// `probe`'s arguments.
struct ProbeArguments {
    var options = ReceiverOptions()
    var duration = 5.0
    var json = false
    var sourceText = ""
    var port: UInt16?, host: String?

    /// - Throws: ``CLIError/usage(_:)`` with a one-line message.
    init(_ argv: [String]) throws {
        var a = Arguments(args: argv)
        options.untimed = true
        var source: String?
        while let arg = a.next() {
            switch arg {
            case "--port": port = UInt16(try a.integer(arg, 1...65535))
            case "--host": host = try a.value(arg)
            case "--duration": duration = try a.number(arg, 0.1...86_400)
            case "--json": json = true
            case "--codec":
                let v = try a.value(arg)
                guard let c = VideoCodec(rawValue: v == "hevc" ? "h265" : v == "avc" ? "h264" : v) else { throw CLIError.usage("--codec: h264 or h265") }
                options.codec = c
            case "--rtp": options.transport = .rtp
            case "--raw": options.transport = .raw
            case "-h", "--help": print(probeUsage); exit(0)
            default:
                if arg.hasPrefix("--") { throw CLIError.usage("unknown option \(arg)\(Suggestion.didYouMean(arg, among: Suggestion.options(in: probeUsage)))") }
                guard source == nil else { throw CLIError.usage("more than one SOURCE") }
                source = arg
            }
        }
        guard let source else { throw CLIError.usage("probe needs a SOURCE\n\(probeUsage)") }
        sourceText = source
    }
}

/// `spyglass probe`: runs one feed on this thread with observers, then prints what it saw.
func runProbe(_ argv: [String]) throws -> Int32 {
    var args = try ProbeArguments(argv)
    Log.setQuiet(true)
    VideoDecoder.setLibraryLogging(verbose: false)
    let url: SourceURL
    let source: ByteSource
    do {
        url = try SourceURL(parsing: args.sourceText)
        args.options.mpegtsSelection = url.mpegtsSelection ?? MPEGTSSelection()
        if case .file(let path) = url, isPacketCapture(path) {
            source = try PcapSource(path: path, port: args.port, host: args.host, speed: 0)
        } else {
            source = try openSource(url, options: args.options)
        }
    } catch {
        let text = "\(error)"
        let shown = SRTURL.redacting(args.sourceText)
        Log.error(text.hasPrefix(shown) ? text : "\(shown): \(text)")
        return 1
    }
    // A pipe on stdin (a camera tool, ffmpeg) is live too: it may never end.
    let live = url.deliversInRealTime || (url == .stdin && standardInputIsAStream())
    if live { args.options.timeoutSeconds = args.duration }
    let label = source.label
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
                        + (rtsp.otherTracks.isEmpty ? "none" : rtsp.otherTracks.joined(separator: ", ") + " (not played)"))
        args.options.sdp = d
    }
    let gathered = ProbeState()
    let metrics = MetricsRegistry()
    let pipeline = Pipeline(id: 1, source: source, options: args.options, metrics: metrics,
                            sink: HeadlessSink(metrics: metrics, latency: nil), observers: gathered.observers())
    if live {
        DispatchQueue.global().asyncAfter(deadline: .now() + args.duration) { pipeline.stop() }
        FileHandle.standardError.write(Data("spyglass probe: reading \(label) for \(args.duration) s…\n".utf8))
    }
    pipeline.runHere()
    if let error = pipeline.error { Log.error(error); return 1 }
    let state = gathered.state.withLock { $0 }
    var probe = state.probe
    probe.finish(summary: pipeline.summary, live: live || packetCapture, datagramSizes: state.sizes,
                 parameterSets: state.parameterSets, captureSpanSeconds: pcapSpan)
    if args.json {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try enc.encode(probe.report), as: UTF8.self))
    } else {
        print("\(label)")
        for line in sdpLines { print(line) }
        print(probe.text)
    }
    return probe.report.accessUnits > 0 ? 0 : 1
}

/// True when standard input is a pipe, a socket or a terminal rather than a regular file.
func standardInputIsAStream() -> Bool {
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
