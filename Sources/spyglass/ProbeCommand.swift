import Foundation
import SpyglassCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let probeUsage = """
usage: spyglass probe SOURCE [--duration S] [--json] [--codec h264|h265] [--rtp|--raw] [--port N] [--host H]

What a stream holds: codec, profile and level, size, bit depth and chroma, frame rate (VUI and
measured), GOP (keyframe interval, recovery points, intra refresh, open GOP), slices per picture,
B-frames and reorder depth, SEI types, time stamps, bitrate; for live sources datagram sizes and
RTP loss; and every error found. Files and packet captures (pcap/pcapng; --port/--host pick the
UDP flow) are read to the end; live sources for --duration (5 s).
"""

func runProbe(_ argv: [String]) throws -> Int32 {
    var a = Arguments(args: argv)
    var options = ReceiverOptions()
    options.untimed = true
    var duration = 5.0
    var json = false
    var sourceText: String?
    var port: UInt16?, host: String?
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
        case "-h", "--help": print(probeUsage); return 0
        default:
            if arg.hasPrefix("--") { throw CLIError.usage("unknown option \(arg)\n\(probeUsage)") }
            guard sourceText == nil else { throw CLIError.usage("more than one SOURCE") }
            sourceText = arg
        }
    }
    guard let sourceText else { throw CLIError.usage("probe needs a SOURCE\n\(probeUsage)") }
    Log.setQuiet(true)
    VideoDecoder.setLibraryLogging(verbose: false)
    let url: SourceURL
    let source: ByteSource
    do {
        url = try SourceURL(parsing: sourceText)
        if case .file(let path) = url, isPacketCapture(path) {
            source = try PcapSource(path: path, port: port, host: host, speed: 0)
        } else {
            source = try openSource(url, options: options)
        }
    } catch {
        Log.error("\(sourceText): \(error)")
        return 1
    }
    if url.isLive { options.timeoutSeconds = duration }
    // The probe's state lives on this thread: the feed runs here (runHere), so the observers
    // are called on it too.
    let gathered = ProbeState()
    var observers = FeedObservers()
    observers.accessUnit = { au, store in gathered.state.withLock { $0.probe.observe(au, store: store) } }
    observers.datagram = { n in gathered.state.withLock { if $0.sizes.count < 1_000_000 { $0.sizes.append(n) } } }
    observers.end = { store in gathered.state.withLock { $0.parameterSets = store } }
    let label = source.label
    let pcapSpan = (source as? PcapSource).flatMap { pcap -> Double? in
        guard let a = pcap.schedule.first?.time, let b = pcap.schedule.last?.time, b > a else { return nil }
        return Double(b - a) / 1e6
    }
    let packetCapture = source is PcapSource
    let pipeline = Pipeline(id: 1, source: source, options: options, sink: HeadlessSink(metrics: MetricsRegistry(), latency: nil),
                            observers: observers)
    if url.isLive {
        DispatchQueue.global().asyncAfter(deadline: .now() + duration) { pipeline.stop() }
        FileHandle.standardError.write(Data("spyglass probe: reading \(label) for \(duration) s…\n".utf8))
    }
    pipeline.runHere()
    if let error = pipeline.error { Log.error(error); return 1 }
    let state = gathered.state.withLock { $0 }
    var probe = state.probe
    probe.finish(summary: pipeline.summary, live: url.isLive || packetCapture, datagramSizes: state.sizes,
                 parameterSets: state.parameterSets, captureSpanSeconds: pcapSpan)
    if json {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try enc.encode(probe.report), as: UTF8.self))
    } else {
        print("\(label)")
        print(probe.text)
    }
    return probe.report.accessUnits > 0 ? 0 : 1
}

/// What `probe` gathers from its feed's thread.
final class ProbeState: Sendable {
    struct Gathered {
        var probe = StreamProbe()
        var sizes: [Int] = []
        var parameterSets: ParameterSetStore?
    }
    let state = Mutex(Gathered())
}
