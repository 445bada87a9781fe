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

@MainActor func runBench(_ argv: [String]) throws -> Int32 {
    var a = Arguments(args: argv)
    var settings = VideoEncoder.Settings()
    var duration = 10.0
    var transport = "udp"
    var rtspTransport = RTSPTransport.udp
    var senderClockOffset: Int64 = 0
    var target = 100.0
    var options = PlayOptions()
    options.latencyLogPath = "out/bench-latency.csv"
    var plotPath: String?
    var displayGiven = false
    var loss = 0.0
    while let arg = a.next() {
        if try parsePatternOption(arg, &a, &settings) { continue }
        switch arg {
        case "--duration": duration = try a.number(arg, 0.5...3600)
        case "--transport":
            transport = try a.value(arg)
            guard BenchLink.transports.contains(transport) else { throw CLIError.usage("--transport: \(BenchLink.transports.joined(separator: ", "))") }
        case "--rtsp-transport":
            let v = try a.value(arg)
            guard let t = RTSPTransport(rawValue: v), t != .auto else { throw CLIError.usage("--rtsp-transport: udp or tcp") }
            rtspTransport = t
        case "--display":
            let v = try a.value(arg)
            guard let d = PlayOptions.DisplayKind(rawValue: v) else { throw CLIError.usage("--display: sdl or none") }
            options.display = d
            displayGiven = true
        case "--target-ms": target = try a.number(arg, 0.1...100_000)
        case "--latency-log": options.latencyLogPath = try a.value(arg)
        case "--plot": plotPath = try a.value(arg)
        case "--idle-flush-ms": options.receiver.idleFlushMicros = Int(try a.number(arg, 0...10_000) * 1000)
        case "--quiet", "-q": options.quiet = true
        case "--loss": loss = try a.number(arg, 0...0.5)
        case "--keyframe-requests": options.receiver.keyframeRequests = try a.onOff(arg)
        case "--sender-clock-offset-ms": senderClockOffset = Int64(try a.number(arg, -86_400_000...86_400_000) * 1000)
        case "--clock-offset-ms": options.captureClock = .absolute(offsetMicros: Int64(try a.number(arg, -86_400_000...86_400_000) * 1000))
        case "--clock-offset":
            guard try a.value(arg) == "relative" else { throw CLIError.usage("--clock-offset: relative") }
            options.captureClock = .relative
        case "-h", "--help": print(benchUsage); return 0
        default: throw CLIError.usage("unknown option \(arg)\(Suggestion.didYouMean(arg, among: Suggestion.options(in: benchUsage)))")
        }
    }
    let env = ProcessInfo.processInfo.environment
    if !displayGiven && env["DISPLAY"] == nil && env["WAYLAND_DISPLAY"] == nil { options.display = .none }
    if let dir = options.latencyLogPath.map({ URL(fileURLWithPath: $0).deletingLastPathComponent().path }) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    options.receiver.codec = settings.codec
    options.keepLatencySamples = true
    options.receiver.timeoutSeconds = duration + 5
    Log.setQuiet(true)

    // Receiver first (kernel-chosen port; the RTSP server in between), then the sender aimed at it.
    var link = try BenchLink.open(transport, codec: settings.codec, rtspTransport: rtspTransport)
    defer { link.close() }
    let session = PlaySession(urls: [link.receiverURL], options: options)
    let via = transport == "rtsp" ? "rtsp over \(rtspTransport.rawValue)" : transport
    let describe = "\(settings.codec.displayName) \(settings.width)x\(settings.height)@\(settings.fps), \(settings.bitrate / 1000) kbit/s, \(settings.slices) slice(s), \(via), display \(options.display.rawValue)"
    writeStandardError("spyglass bench: \(describe), \(String(format: "%.0f", duration)) s\n")

    let senderDone = link.startSender(settings, durationSeconds: duration, clockOffsetMicros: senderClockOffset, loss: loss)
    let started = MonotonicClock.nowMicros()
    var lastLine = 0
    session.onTick = {
        let elapsed = Double(MonotonicClock.nowMicros() - started) / 1e6
        let frac = min(1, elapsed / duration)
        let bar = String(repeating: "█", count: Int(frac * 30)) + String(repeating: "·", count: 30 - Int(frac * 30))
        let frames = session.feeds.first?.latency?.count ?? 0
        // A progress bar on a terminal; a line per second in a log.
        if isatty(2) != 0 {
            writeStandardError(String(format: "\r  [%@] %4.1f/%.0f s  %d frames", bar, min(elapsed, duration), duration, frames))
        } else if Int(elapsed) > lastLine {
            lastLine = Int(elapsed)
            writeStandardError(String(format: "  %4.0f/%.0f s  %d frames\n", min(elapsed, duration), duration, frames))
        }
        if senderDone.isSet { session.feeds.first?.pipeline.stop() }
    }
    let rc = session.run(openedSource: try link.openReceiver())
    if isatty(2) != 0 { writeStandardError("\n") }
    guard rc == 0, let recorder = session.feeds.first?.latency else { return rc }

    print(recorder.table())
    let s = session.feeds.first?.pipeline.summary
    if let s { print("frames: \(s.framesDecoded) decoded, \(s.framesDisplayed) displayed, \(s.framesDropped) dropped; \(s.decodeErrors) decode errors") }
    if let l = s?.srt { print(FeedSummary.srtText(l)) }
    if let s, loss > 0 { print("loss: \(s.datagramsLost) packets lost; \(s.keyframeRequestsLoss + s.keyframeRequestsCut) keyframe requests; clean again \(s.recoveries) time\(s.recoveries == 1 ? "" : "s")" + (s.recoveryMillisP50.map { String(format: ", recovery p50 %.0f ms", $0) } ?? "")) }
    let v = BenchVerdict(recorder: recorder, summary: s, targetMillis: target, relative: options.captureClock == .relative)
    print(v.line)
    if let csv = options.latencyLogPath {
        print("per-frame log: \(csv)")
        let png = plotPath ?? (csv.hasSuffix(".csv") ? String(csv.dropLast(4)) + ".png" : csv + ".png")
        if png != "none" { print(plotLatency(csv: csv, png: png, title: "spyglass bench: \(describe)")) }
    }
    return v.passed ? 0 : 3
}
