import Foundation
import SpyglassFeed
import SpyglassDisplay
import SpyglassSession
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
import SpyglassIngest
#endif

let benchUsage = """
usage: spyglass bench [options]

Closed loop on this machine: the test-pattern sender (libx264/libx265, zero latency, capture
time stamped in an ST 0604 SEI), then UDP, TCP, SRT or GStreamer's RTSP server on 127.0.0.1,
then the receiver. Prints
p50/p95/p99/max per stage and the verdict against the target, writes the per-frame CSV and
a plot (tools/plot-latency).
  --codec h264|h265      (default h264)       --size WxH   (default 1280x720)
  --fps N                (default 30)         --bitrate N  (default 4M)
  --slices N             (default 1)          --duration S (default 10)
  --preset NAME          x264/x265 preset (default ultrafast)
  --transport udp|rtp|tcp|mpegts|srt|rtsp   (default udp: raw Annex B; mpegts over UDP; srt: MPEG-TS over SRT,
                         latency 20 ms; rtsp: RTP through tools/rtsp-server, GStreamer's RTSP server)
  --rtsp-transport udp|tcp   how the RTSP client takes the RTP (default udp)
  --display sdl|none     (default sdl when a display exists)
  --target-ms N          glass-to-glass target (default 100)
  --latency-log FILE     (default out/bench-latency.csv)
  --plot FILE.png        (default next to the CSV; --plot none to skip)
  --idle-flush-ms MS     receiver idle flush (default 1)
  --loss P               the sender drops P of its UDP datagrams (0-0.5, seeded); a "loss:" line gives the recovery
  --keyframe-requests on|off   the receiver's RTCP PLIs on loss (rtp, rtsp; default on): compare both
  --sender-clock-offset-ms N   the sender stamps as if its clock ran N ms ahead (a drone not synchronized)
  --clock-offset-ms N | --clock-offset relative   how the receiver reads those stamps (as play)
"""

/// What `spyglass bench` was asked for.
struct BenchRequest {
    var settings = VideoEncoder.Settings()
    var duration = 10.0
    var transport = "udp"
    var rtspTransport = RTSPTransport.udp
    var senderClockOffsetMicros: Int64 = 0
    var targetMillis = 100.0
    var options = PlayOptions()
    var plotPath: String?
    var displayGiven = false
    var loss = 0.0
}

/// `spyglass bench`'s options. - Returns: nil when `--help` was printed.
/// - Throws: ``CLIError/usage(_:)`` for an unknown option or a value out of range.
func parseBench(_ argv: [String]) throws -> BenchRequest? {
    var a = Arguments(args: argv)
    var r = BenchRequest()
    r.options.latencyLogPath = "out/bench-latency.csv"
    while let arg = a.next() {
        if try parsePatternOption(arg, &a, &r.settings) { continue }
        switch arg {
        case "--duration": r.duration = try a.number(arg, 0.5...3600)
        case "--transport":
            r.transport = try a.value(arg)
            guard BenchLink.transports.contains(r.transport) else { throw CLIError.usage("--transport: \(BenchLink.transports.joined(separator: ", "))") }
        case "--rtsp-transport":
            guard let t = RTSPTransport(rawValue: try a.value(arg)), t != .auto else { throw CLIError.usage("--rtsp-transport: udp or tcp") }
            r.rtspTransport = t
        case "--display":
            guard let d = PlayOptions.DisplayKind(rawValue: try a.value(arg)) else { throw CLIError.usage("--display: sdl or none") }
            r.options.display = d
            r.displayGiven = true
        case "--target-ms": r.targetMillis = try a.number(arg, 0.1...100_000)
        case "--latency-log": r.options.latencyLogPath = try a.value(arg)
        case "--plot": r.plotPath = try a.value(arg)
        case "--idle-flush-ms": r.options.receiver.idleFlushMicros = Int(try a.number(arg, 0...10_000) * 1000)
        case "--quiet", "-q": r.options.quiet = true
        case "--loss": r.loss = try a.number(arg, 0...0.5)
        case "--keyframe-requests": r.options.receiver.keyframeRequests = try a.onOff(arg)
        case "--sender-clock-offset-ms": r.senderClockOffsetMicros = Int64(try a.number(arg, -86_400_000...86_400_000) * 1000)
        case "--clock-offset-ms": r.options.captureClock = .absolute(offsetMicros: Int64(try a.number(arg, -86_400_000...86_400_000) * 1000))
        case "--clock-offset":
            guard try a.value(arg) == "relative" else { throw CLIError.usage("--clock-offset: relative") }
            r.options.captureClock = .relative
        case "-h", "--help": print(benchUsage); return nil
        default: throw CLIError.usage("unknown option \(arg)\(Suggestion.didYouMean(arg, among: Suggestion.options(in: benchUsage)))")
        }
    }
    let env = ProcessInfo.processInfo.environment
    if !r.displayGiven && env["DISPLAY"] == nil && env["WAYLAND_DISPLAY"] == nil { r.options.display = .none }
    r.options.receiver.codec = r.settings.codec
    r.options.keepLatencySamples = true
    r.options.receiver.timeoutSeconds = r.duration + 5
    return r
}

/// `spyglass bench`: the receiver first (kernel-chosen port; the RTSP server in between), then
/// the sender aimed at it; the report once the sender is done. Exit 0 on PASS, 3 on FAIL.
@MainActor func runBench(_ argv: [String]) throws -> Int32 {
    guard let r = try parseBench(argv) else { return 0 }
    if let dir = r.options.latencyLogPath.map({ URL(fileURLWithPath: $0).deletingLastPathComponent().path }) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    Log.setQuiet(true)
    var link = try BenchLink.open(r.transport, codec: r.settings.codec, rtspTransport: r.rtspTransport)
    defer { link.close() }
    let session = PlaySession(urls: [link.receiverURL], options: r.options)
    let via = r.transport == "rtsp" ? "rtsp over \(r.rtspTransport.rawValue)" : r.transport
    let set = r.settings
    let describe = "\(set.codec.displayName) \(set.width)x\(set.height)@\(set.fps), \(set.bitrate / 1000) kbit/s, \(set.slices) slice(s), \(via), display \(r.options.display.rawValue)"
    writeStandardError("spyglass bench: \(describe), \(String(format: "%.0f", r.duration)) s\n")
    let senderDone = link.startSender(set, durationSeconds: r.duration, clockOffsetMicros: r.senderClockOffsetMicros, loss: r.loss)
    let started = MonotonicClock.nowMicros()
    var lastLine = 0
    session.onTick = {
        let elapsed = Double(MonotonicClock.nowMicros() - started) / 1e6
        if let line = benchProgress(elapsed: elapsed, duration: r.duration, frames: session.feeds.first?.latency?.count ?? 0,
                                    tty: isatty(2) != 0, lastLineSecond: &lastLine) { writeStandardError(line) }
        if senderDone.isSet { session.feeds.first?.pipeline.stop() }
    }
    let rc = session.run(openedSource: try link.openReceiver())
    if isatty(2) != 0 { writeStandardError("\n") }
    guard rc == 0, let recorder = session.feeds.first?.latency else { return rc }
    let s = session.feeds.first?.pipeline.summary
    let v = BenchVerdict(recorder: recorder, summary: s, targetMillis: r.targetMillis, relative: r.options.captureClock == .relative)
    benchReport(recorder: recorder, summary: s, lossGiven: r.loss > 0, verdict: v).forEach { print($0) }
    if let csv = r.options.latencyLogPath {
        print("per-frame log: \(csv)")
        let png = r.plotPath ?? (csv.hasSuffix(".csv") ? String(csv.dropLast(4)) + ".png" : csv + ".png")
        if png != "none" { print(plotLatency(csv: csv, png: png, title: "spyglass bench: \(describe)")) }
    }
    return v.passed ? 0 : 3
}
