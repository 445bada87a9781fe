import Foundation
import SpyglassCore

// `spyglass` command line. Keep state in types: Swift 6 puts main.swift globals on the main actor.

let usage = """
usage: spyglass play SOURCE [SOURCE …] [options]
       spyglass send pattern|FILE DEST [options]     (spyglass send --help)
       spyglass bench [options]                      (spyglass bench --help)
       spyglass probe SOURCE [--json]                (spyglass probe --help)
       spyglass replay RECORDING [--speed X] [--loop] [--from S] [--to S] [play options]

SOURCE: udp://[ADDR]:PORT | tcp://HOST:PORT | tcp://[ADDR]:PORT?listen | FILE | -
  Several SOURCEs play as one feed each, on their own threads, headless (--display none)
  for now; `{n}` in --framemd5/--latency-log/--record/--summary becomes the feed's number (1, 2, …).
  --codec auto|h264|h265   codec (default auto: detected from the NAL headers)
  --display sdl|none       SDL2 window (default) or headless decode
  --frames N               stop after N decoded frames
  --timeout S              stop after S seconds with no data
  --fps N                  frame rate for files/stdin (default: VUI timing, else 30)
  --untimed                play files/stdin as fast as possible
  --allow-from ADDR[/N]    accept UDP datagrams / TCP senders only from there (repeatable)
  --stall-ms MS            no new frame for MS shows a STALLED state with the frame's age (default 500)
  --hide-damaged           hold the last clean frame instead of showing concealed ones (default: show)
  --rtp | --raw            force RTP (RFC 6184/7798) or raw Annex B on UDP (default: auto-detect)
  --sdp FILE               RTP payload type, codec and sprop parameter sets from an SDP
  --reorder-ms MS          RTP jitter buffer: wait up to MS for a missing packet (default 0: no wait)
  --join-timeout-ms MS     wait this long for an IDR/recovery point after a join (default 2000)
  --decode au|nal          whole access units (default), or H.264 per NAL unit (clean multi-slice links only)
  --idle-flush-ms MS       live input idle this long ends the frame (default 1, 0 = off)
  --threads N              decoder slice threads (default: 1, or 2 when pictures have several slices; never frame threads)
  --framemd5 FILE          one line per decoded frame, as `ffmpeg -f framemd5`
  --summary FILE           write the exit summary as JSON
  --record PATH            record what arrives: PATH.h264/.h265 + .idx (crash-safe, replay with `spyglass replay`)
  --record-split-mb N      start a new file after N MiB (each file starts at a keyframe)
  --record-split-min M     start a new file after M minutes
  --latency-log FILE       per-frame timing, .csv or .jsonl (dropped frames included, marked)
  --snapshot FILE.ppm      save the window's last presented picture (read back)
  --window-size WxH        initial window size (default: the video's size)
  --window-pos X,Y         window position on the screen
  --clock                  draw a wall-clock time code under the picture; a camera filming it and
                           streaming back gives optical glass-to-glass (optical_ms in --latency-log)
  --vsync                  wait for vblank on present (off by default)
  --max-au-mb N            largest access unit (default 32)
  --max-size WxH           largest picture accepted from an SPS (default \(PictureSizeCap.default))
  --quiet                  only errors and the summary
  --verbose                also libavcodec's own warnings
Window keys: f fullscreen, s link statistics, q/Esc quit
"""

enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    var description: String { if case .usage(let s) = self { return s }; return "" }
}

struct Arguments {
    var args: [String]
    var i = 0
    mutating func next() -> String? { defer { i += 1 }; return i < args.count ? args[i] : nil }
    mutating func value(_ flag: String) throws -> String {
        guard let v = next() else { throw CLIError.usage("\(flag) needs a value") }
        return v
    }
    /// A number in `range` (inclusive); a clear usage error otherwise.
    mutating func number(_ flag: String, _ range: ClosedRange<Double>) throws -> Double {
        let v = try value(flag)
        guard let d = Double(v), d.isFinite else { throw CLIError.usage("\(flag): '\(v)' is not a number") }
        guard range.contains(d) else {
            throw CLIError.usage("\(flag): \(v) is out of range (\(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)))")
        }
        return d
    }
    /// A whole number in `range`.
    mutating func integer(_ flag: String, _ range: ClosedRange<Int>) throws -> Int {
        let d = try number(flag, Double(range.lowerBound)...Double(range.upperBound))
        guard d == d.rounded() else { throw CLIError.usage("\(flag): must be a whole number") }
        return Int(d)
    }
    static func format(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
}

func parsePlay(_ argv: [String]) throws -> ([SourceURL], PlayOptions) {
    var a = Arguments(args: argv)
    var o = PlayOptions()
    var sources: [String] = []
    while let arg = a.next() {
        switch arg {
        case "--codec":
            let v = try a.value(arg)
            switch v {
            case "auto": o.receiver.codec = nil
            case "h264", "avc": o.receiver.codec = .h264
            case "h265", "hevc": o.receiver.codec = .h265
            default: throw CLIError.usage("--codec: '\(v)' (use auto, h264 or h265)")
            }
        case "--display":
            let v = try a.value(arg)
            guard let d = PlayOptions.DisplayKind(rawValue: v) else { throw CLIError.usage("--display: '\(v)' (use sdl or none)") }
            o.display = d
        case "--frames": o.receiver.maxFrames = try a.integer(arg, 1...1_000_000_000)
        case "--timeout": o.receiver.timeoutSeconds = try a.number(arg, 0.001...1_000_000)
        case "--fps":
            o.receiver.fps = try a.number(arg, 0.1...1000)
        case "--untimed": o.receiver.untimed = true
        case "--allow-from":
            let v = try a.value(arg)
            guard let prefix = AddressPrefix(v) else { throw CLIError.usage("--allow-from: '\(v)' (use ADDR or ADDR/PREFIX)") }
            o.receiver.allowFrom.append(prefix)
        case "--stall-ms": o.stallMillis = try a.number(arg, 50...600_000)
        case "--hide-damaged": o.showDamaged = false
        case "--show-damaged": o.showDamaged = true
        case "--rtp": o.receiver.transport = .rtp
        case "--raw": o.receiver.transport = .raw
        case "--reorder-ms": o.receiver.reorderWindowMicros = Int(try a.number(arg, 0...5_000) * 1000)
        case "--join-timeout-ms": o.receiver.joinTimeoutMicros = Int(try a.number(arg, 0...600_000) * 1000)
        case "--decode": 
            let v = try a.value(arg)
            guard let m = ReceiverOptions.DecodeMode(rawValue: v) else { throw CLIError.usage("--decode: auto, au or nal") }
            o.receiver.decodeMode = m
        case "--sdp":
            let path = try a.value(arg)
            do { o.receiver.sdp = try SessionDescription(path: path) } catch {
                FileHandle.standardError.write(Data("spyglass: error: \(error)\n".utf8)); exit(1)
            }
        case "--idle-flush-ms": o.receiver.idleFlushMicros = Int(try a.number(arg, 0...10_000) * 1000)
        case "--threads": o.receiver.decoderThreads = try a.integer(arg, 1...64); o.receiver.autoSliceThreads = false
        case "--framemd5": o.framemd5Path = try a.value(arg)
        case "--summary": o.summaryPath = try a.value(arg)
        case "--record": o.recordPath = try a.value(arg)
        case "--record-split-mb": o.recordSplitBytes = Int(try a.number(arg, 0.01...1_000_000) * 1_048_576)
        case "--record-split-min": o.recordSplitMicros = UInt64(try a.number(arg, 0.05...100_000) * 60_000_000)
        case "--latency-log": o.latencyLogPath = try a.value(arg)
        case "--snapshot": o.snapshotPath = try a.value(arg)
        case "--vsync": o.vsync = true
        case "--clock": o.clock = true
        case "--window-pos":
            let v = try a.value(arg)
            let parts = v.split(separator: ",").compactMap { Int($0) }
            guard parts.count == 2, (0...16384).contains(parts[0]), (0...16384).contains(parts[1]) else {
                throw CLIError.usage("--window-pos: '\(v)' (use X,Y)")
            }
            o.windowPosition = (parts[0], parts[1])
        case "--window-size":
            let v = try a.value(arg)
            let parts = v.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (64...8192).contains(parts[0]), (64...8192).contains(parts[1]) else {
                throw CLIError.usage("--window-size: '\(v)' (use WxH, 64 to 8192 each)")
            }
            o.windowSize = (parts[0], parts[1])
        case "--quiet", "-q": o.quiet = true
        case "--verbose", "-v": o.verbose = true
        case "--max-au-mb": o.receiver.maxAccessUnitBytes = Int(try a.number(arg, 0.01...1024) * 1_048_576)
        case "--max-size":
            let v = try a.value(arg)
            let parts = v.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (16...16384).contains(parts[0]), (16...16384).contains(parts[1]) else {
                throw CLIError.usage("--max-size: '\(v)' (use WxH, 16 to 16384 each)")
            }
            o.receiver.maxPictureWidth = parts[0]; o.receiver.maxPictureHeight = parts[1]
        case "-h", "--help": print(usage); exit(0)
        case "--":
            while let rest = a.next() { sources.append(rest) }
        default:
            if arg.hasPrefix("--") { throw CLIError.usage("unknown option \(arg)") }
            sources.append(arg)
        }
    }
    guard !sources.isEmpty else { throw CLIError.usage("play needs a SOURCE") }
    var urls: [SourceURL] = []
    for text in sources {
        do {
            urls.append(try SourceURL(parsing: text))
        } catch {
            FileHandle.standardError.write(Data("spyglass: error: \(text): \(error)\n".utf8))
            exit(1)
        }
    }
    return (urls, o)
}

var argv = Array(CommandLine.arguments.dropFirst())
guard let command = argv.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
argv.removeFirst()

do {
    switch command {
    case "play":
        let (urls, options) = try parsePlay(argv)
        exit(PlaySession(urls: urls, options: options).run())
    case "send":
        exit(try runSend(argv))
    case "bench":
        exit(try runBench(argv))
    case "probe":
        exit(try runProbe(argv))
    case "replay":
        exit(try runReplay(argv))
    case "-h", "--help", "help":
        print(usage + "\n\n" + sendUsage + "\n\n" + benchUsage + "\n\n" + probeUsage)
    default:
        throw CLIError.usage("unknown command '\(command)'")
    }
} catch let e as CLIError {
    // One line: the problem, and where the usage is.
    let first = "\(e)".split(separator: "\n").first.map(String.init) ?? "\(e)"
    FileHandle.standardError.write(Data("spyglass: \(first) (see spyglass \(command) --help)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("spyglass: error: \(error)\n".utf8))
    exit(1)
}
