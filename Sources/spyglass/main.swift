import Foundation
import SpyglassFeed
import SpyglassSession
import SpyglassBitstream
import SpyglassIngest

// `spyglass` command line. Keep state in types: Swift 6 puts main.swift globals on the main actor.

// Before anything else starts a thread: Ctrl-C and SIGTERM are caught from here on, never lost.
StopSignals.install()

let usage = """
usage: spyglass play SOURCE [SOURCE …] [--wall FILE] [options]
       spyglass send pattern|FILE DEST [options]     (spyglass send --help)
       spyglass bench [options]                      (spyglass bench --help)
       spyglass probe SOURCE [--json]                (spyglass probe --help)
       spyglass replay RECORDING [--speed X] [--loop] [--from S] [--to S] [play options]
       spyglass repair RECORDING.mkv|.mp4|.ts        (a killed recording's Cues and duration: NAME.repaired.EXT)
       spyglass export RECORDING.h264 OUT.mkv|.ts|.mp4   (a raw recording into a container, at its index's times)
       spyglass --version                            (this build and the libraries it loaded)

SOURCE: udp://[ADDR]:PORT | tcp://HOST:PORT | tcp://[ADDR]:PORT?listen | rtsp[s]://[USER:PASS@]HOST[:PORT]/PATH[?track=N][&insecure] |
        srt://HOST:PORT | srt://[ADDR]:PORT?mode=listener (&latency=MS, default 20; &passphrase=…; &streamid=ID; &pbkeylen=16|24|32) | FILE | -
  MPEG-TS: add ?program=N or ?pid=N (udp://, tcp://, rtsp://, FILE) to choose a program or a video PID. FILE may be .mkv/.mp4/.mov.
  Several SOURCEs play as one feed each, on their own threads, in one window with a tile per feed
  (the wall), or headless with --display none; `{n}` in --framemd5/--latency-log/--record/--summary
  becomes the feed's number (1, 2, …).
  --wall FILE              more feeds, one per line: SOURCE [name=TEXT] [--codec C] [--sdp FILE]
                           [--allow-from ADDR[/N]]… [--rtp|--raw] [--reorder-ms MS] [--rtp-ext ID=URI] [--join-timeout-ms MS]
                           [--record PATH] [--target-ms MS] [--mavlink URL]; `#` comments, blank lines; "…" keeps blanks.
                           Command-line options apply to every feed, a line's own override them.
  --layout CxR             the wall's grid (default from the count: 1, 2x1, 2x2, 3x3, 4x4)
  --gravity letterbox|fill|stretch  how pictures fill their tiles (default letterbox; fill crops)
  --codec auto|h264|h265   codec (default auto: detected from the NAL headers)
  --display sdl|none       SDL2 window (default) or headless decode (a status line per feed on stderr)
  --frames N               stop after N decoded frames
  --timeout S              stop after S seconds with no data
  --fps N                  frame rate for files/stdin (default: VUI timing, else 30)
  --untimed                play files/stdin as fast as possible
  --allow-from ADDR[/N]    accept UDP datagrams / TCP senders only from there (repeatable)
  --target-ms MS           glass-to-glass target shown green/amber/red in the overlay and on tiles (default 100)
  --stall-ms MS            no new frame for MS shows a STALLED state with the frame's age (default 500)
  --hide-damaged           hold the last clean frame instead of showing concealed ones (default: show)
  --rtp | --raw            force RTP (RFC 6184/7798) or raw Annex B on UDP (default: auto-detect)
  --rtsp-transport auto|udp|tcp  RTP from an RTSP server: UDP, falling back to TCP after 1 s (auto), or one of them
  --sdp FILE               RTP payload type, codec and sprop parameter sets from an SDP
  --reorder-ms MS          RTP jitter buffer: wait up to MS for a missing packet (default 0: no wait)
  --rtp-ext ID=ntp-64|abs-capture-time  RTP: capture times from that header extension (default: the SDP's a=extmap)
  --keyframe-requests on|off  RTP: ask the sender for a keyframe (RTCP PLI, then FIR) on loss or a mid-stream join (default on)
  --keyframe-url URL       also ask with an HTTP GET (e.g. OpenIPC: http://CAM/request/idr), on any link: damage, joins
  --join-timeout-ms MS     wait this long for an IDR/recovery point after a join, then decode anyway (default 2000)
  --join wait|show         after a join: wait for a clean picture (default), or show concealed ones at once, marked damaged
  --decode au|nal          whole access units (default), or H.264 per NAL unit (clean multi-slice links only)
  --idle-flush-ms MS       live input idle this long ends the frame (default 1, 0 = off)
  --threads N              decoder slice threads (default: 1, or 2 when pictures have several slices; never frame threads)
  --framemd5 FILE          one line per decoded frame, as `ffmpeg -f framemd5`
  --summary FILE           write the exit summary as JSON
  --record PATH            record what arrives, crash-safe: PATH.mkv (default), .ts or .mp4 with captions; PATH.h264/.h265 + .idx raw
  --record-split-mb N      start a new file after N MiB (each file starts at a keyframe)
  --record-split-min M     start a new file after M minutes
  --bundle DIR             keep the last --bundle-seconds S (30) of what arrives; b (and the end) write a bug bundle there
  --mavlink URL            MAVLink telemetry (udp://[HOST]:PORT, udpout://HOST:PORT, serial:///dev/ttyUSB0?baud=57600): OSD (o), /metrics, PATH.tlog
  --latency-log FILE       per-frame timing, .csv or .jsonl (dropped frames included, marked)
  --snapshot FILE.ppm      save the whole window as it was when it closed
  --window-size WxH        initial window size (default: the video's size, at most 90 % of the screen, centred)
  --window-pos X,Y         window position on the screen
  --clock                  draw a wall-clock time code under the picture; a camera filming it and
                           streaming back gives optical glass-to-glass (optical_ms in --latency-log)
  --max-au-mb N            largest access unit (default 32)
  --max-size WxH           largest picture accepted from an SPS (default \(PictureSizeCap.default))
  --clock-offset-ms N | --clock-offset relative  the sender's stamps run N ms ahead of ours, or: measure from the fastest frame
  --metrics [ADDR:]PORT    Prometheus metrics at http://ADDR:PORT/metrics (per feed: counters, stage histograms, frame age, state)
  --status S               headless: a line per feed (state, fps, bitrate, frame age, glass-to-glass) every
                           S s, redrawn in place on a terminal (default 1 on a terminal, 10 otherwise, 0 = off)
  --quiet                  only errors and the summary
  --verbose                also libavcodec's own warnings
Window keys: f fullscreen, a gravity (letterbox/fill/stretch), i the last second live (fps, bitrate, glass-to-glass against --target-ms, stages),
             s the run's link statistics, o the aircraft's OSD (--mavlink, KLV), b a bug bundle (--bundle),
             p PNG screenshot (./spyglass-SOURCE-TIME.png), q/Esc quit
Replay keys: space pause/resume, . one frame (paused), ←/→ seek 5 s, [ ] half/double speed
Wall keys: 1-9 or click focus a feed (same key, click or Esc: back), Tab next feed, a gravity,
           i last second's numbers, s link statistics, o OSD per tile, b bug bundles, p PNG screenshot
           (./spyglass-NAME-TIME.png), f fullscreen, q quit
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
    /// The value read by `parse`; a usage error naming `use` when it gives nil.
    mutating func parsed<T>(_ flag: String, _ parse: (String) -> T?, use: String) throws -> T {
        let v = try value(flag)
        guard let t = parse(v) else { throw CLIError.usage("\(flag): '\(v)' (use \(use))") }
        return t
    }
    /// `on` (true) or `off` (false); a usage error otherwise.
    mutating func onOff(_ flag: String) throws -> Bool {
        let v = try value(flag)
        guard v == "on" || v == "off" else { throw CLIError.usage("\(flag): '\(v)' (use on or off)") }
        return v == "on"
    }
    /// A whole number in `range`.
    mutating func integer(_ flag: String, _ range: ClosedRange<Int>) throws -> Int {
        let d = try number(flag, Double(range.lowerBound)...Double(range.upperBound))
        guard d == d.rounded() else { throw CLIError.usage("\(flag): must be a whole number") }
        return Int(d)
    }
    /// Two whole numbers `AxB` (separator `sep`), each in `range`; `hint` names the form in the error.
    mutating func pair(_ flag: String, separator sep: Character, _ range: ClosedRange<Int>, hint: String) throws -> (Int, Int) {
        let v = try value(flag)
        let parts = v.split(separator: sep).compactMap { Int($0) }
        guard parts.count == 2, range.contains(parts[0]), range.contains(parts[1]) else {
            throw CLIError.usage("\(flag): '\(v)' (use \(hint), \(range.lowerBound) to \(range.upperBound) each)")
        }
        return (parts[0], parts[1])
    }
    static func format(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
}

/// The commands, for "did you mean" on a mistyped one.
let commands = ["play", "send", "bench", "probe", "replay", "repair", "export"]

MemoryPolicy.install()
MemoryPolicy.startHousekeeping()
var argv = Array(CommandLine.arguments.dropFirst())
guard let command = argv.first else {
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(2)
}
argv.removeFirst()

do {
    switch command {
    case "play":
        let (urls, options, perFeed) = try PlayArguments.parseFeeds(argv)
        let session = PlaySession(urls: urls, options: options, perFeed: perFeed)
        session.showsStatusLines = true
        exit(session.run())
    case "send": exit(try runSend(argv))
    case "bench": exit(try runBench(argv))
    case "probe": exit(try runProbe(argv))
    case "replay": exit(try runReplay(argv))
    case "repair", "export": print(try ContainerImport.command(command, argv))
    case "-V", "--version", "version":
        print((["spyglass \(BuildInfo.version)"] + BuildInfo.libraryLines()).joined(separator: "\n"))
    case "-h", "--help", "help":
        print(usage + "\n\n" + sendUsage + "\n\n" + benchUsage + "\n\n" + probeUsage + "\n\n" + replayUsage)
    default:
        throw CLIError.usage("unknown command '\(command)'\(Suggestion.didYouMean(command, among: commands))")
    }
} catch let e as CLIError {
    // One line: the problem, and where the usage is.
    let first = "\(e)".split(separator: "\n").first.map(String.init) ?? "\(e)"
    let known = commands.contains(command)
    FileHandle.standardError.write(Data("spyglass: \(first) (see spyglass \(known ? command + " " : "")--help)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("spyglass: error: \(error)\n".utf8))
    exit(1)
}
