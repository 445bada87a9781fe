import Foundation
import SpyglassFeed
import SpyglassDisplay
import SpyglassSession
import SpyglassTransport
import SpyglassIngest

/// `spyglass play` (and `replay`) arguments: sources and options, each option handled by the
/// group it belongs to (receive path, outputs, window).
enum PlayArguments {
    /// Every option `play` knows, for "did you mean" on a mistyped one.
    static let known = ["--codec", "--display", "--frames", "--timeout", "--fps", "--untimed", "--allow-from",
                        "--stall-ms", "--hide-damaged", "--show-damaged", "--rtp", "--raw", "--reorder-ms", "--rtp-ext", "--keyframe-requests", "--keyframe-url", "--join",
                        "--join-timeout-ms", "--decode", "--sdp", "--idle-flush-ms", "--threads", "--framemd5",
                        "--summary", "--record", "--record-split-mb", "--record-split-min", "--latency-log",
                        "--snapshot", "--clock", "--window-pos", "--window-size", "--quiet", "--status",
                        "--verbose", "--max-au-mb", "--max-size", "--help", "--clock-offset-ms", "--clock-offset", "--rtsp-transport", "--metrics",
                        "--wall", "--layout", "--gravity", "--target-ms", "--mavlink", "--bundle", "--bundle-seconds"]

    /// Parses `play`'s arguments when every feed has the same options (`replay`).
    /// - Returns: the sources, in order (feed 1, 2, …), and the options.
    /// - Throws: ``CLIError/usage(_:)`` with a one-line message.
    static func parse(_ argv: [String]) throws -> ([SourceURL], PlayOptions) {
        let (urls, o, _) = try parseFeeds(argv)
        return (urls, o)
    }

    /// Parses `play`'s arguments, `--wall FILE` included.
    /// - Returns: the sources in order (those on the command line, then the wall file's), the
    ///   command line's options, and each feed's own options (the wall file's lines over those).
    /// - Throws: ``CLIError/usage(_:)`` with a one-line message (file and line for the wall file).
    static func parseFeeds(_ argv: [String]) throws -> ([SourceURL], PlayOptions, [PlayOptions]) {
        var a = Arguments(args: argv)
        var o = PlayOptions()
        var sources: [String] = []
        var wallPath: String?
        while let arg = a.next() {
            if try receiverOption(arg, &a, &o.receiver) || outputOption(arg, &a, &o) || windowOption(arg, &a, &o) { continue }
            switch arg {
            case "-h", "--help": print(usage); exit(0)
            case "--wall": wallPath = try a.value(arg)
            case "--": while let rest = a.next() { sources.append(rest) }
            default:
                if arg.hasPrefix("-") && arg.count > 1 { throw CLIError.usage("unknown option \(arg)\(suggestion(arg))") }
                sources.append(arg)
            }
        }
        var urls = try sources.map(url)
        var perFeed = sources.map { _ in o }
        if let wallPath {
            for entry in try WallFile.read(wallPath, base: o) {
                urls.append(entry.source)
                perFeed.append(entry.options)
            }
        }
        guard !urls.isEmpty else { throw CLIError.usage("play needs a SOURCE (or --wall FILE)") }
        return (urls, o, perFeed)
    }

    private static func url(_ text: String) throws -> SourceURL {
        do { return try SourceURL(parsing: text) } catch {
            // The error names the URL already, with any passphrase redacted.
            let why = "\(error)", shown = SRTURL.redacting(text)
            FileHandle.standardError.write(Data("spyglass: error: \(why.hasPrefix(shown) ? why : "\(shown): \(why)")\n".utf8))
            exit(1)
        }
    }

    /// " (did you mean --x?)" for the closest known option, when one is close.
    static func suggestion(_ arg: String) -> String {
        Suggestion.didYouMean(arg.split(separator: "=").first.map(String.init) ?? arg, among: known)
    }

    /// Options of the receive path. Returns false when `arg` is not one of them.
    static func receiverOption(_ arg: String, _ a: inout Arguments, _ r: inout ReceiverOptions) throws -> Bool {
        switch arg {
        case "--codec":
            let v = try a.value(arg)
            switch v {
            case "auto": r.codec = nil
            case "h264", "avc": r.codec = .h264
            case "h265", "hevc": r.codec = .h265
            default: throw CLIError.usage("--codec: '\(v)' (use auto, h264 or h265)")
            }
        case "--frames": r.maxFrames = try a.integer(arg, 1...1_000_000_000)
        case "--timeout": r.timeoutSeconds = try a.number(arg, 0.001...1_000_000)
        case "--fps": r.fps = try a.number(arg, 0.1...1000)
        case "--untimed": r.untimed = true
        case "--allow-from": r.allowFrom.append(try a.parsed(arg, AddressPrefix.init, use: "ADDR or ADDR/PREFIX"))
        case "--rtsp-transport": r.rtspTransport = try a.parsed(arg, RTSPTransport.init(rawValue:), use: "auto, udp or tcp")
        case "--rtp": r.transport = .rtp
        case "--raw": r.transport = .raw
        case "--reorder-ms": r.reorderWindowMicros = Int(try a.number(arg, 0...5_000) * 1000)
        case "--rtp-ext": r.captureExtension = try a.parsed(arg, CaptureTimeExtension.init(argument:), use: "ID=ntp-64 or ID=abs-capture-time, or ID=URI; ID 1-255")
        case "--keyframe-requests": r.keyframeRequests = try a.onOff(arg)
        case "--keyframe-url": r.keyframeURL = try a.value(arg); if let why = KeyframeURL.problem(with: r.keyframeURL!) { throw CLIError.usage("--keyframe-url: \(why)") }
        case "--join-timeout-ms": r.joinTimeoutMicros = Int(try a.number(arg, 0...600_000) * 1000)
        case "--join": r.join = try a.parsed(arg, ReceiverOptions.Join.init(rawValue:), use: "wait or show")
        case "--decode": r.decodeMode = try a.parsed(arg, ReceiverOptions.DecodeMode.init(rawValue:), use: "au or nal")
        case "--sdp": r.sdp = try SessionDescription(path: a.value(arg))   // unreadable: "spyglass: error: …", exit 1
        case "--idle-flush-ms": r.idleFlushMicros = Int(try a.number(arg, 0...10_000) * 1000)
        case "--threads": r.decoderThreads = try a.integer(arg, 1...64); r.autoSliceThreads = false
        case "--max-au-mb": r.maxAccessUnitBytes = Int(try a.number(arg, 0.01...1024) * 1_048_576)
        case "--max-size":
            (r.maxPictureWidth, r.maxPictureHeight) = try a.pair(arg, separator: "x", 16...16384, hint: "WxH")
        default: return false
        }
        return true
    }

    /// Files written and what is logged. Returns false when `arg` is not one of them.
    private static func outputOption(_ arg: String, _ a: inout Arguments, _ o: inout PlayOptions) throws -> Bool {
        switch arg {
        case "--framemd5": o.framemd5Path = try a.value(arg)
        case "--summary": o.summaryPath = try a.value(arg)
        case "--record": o.recordPath = try a.value(arg)
        case "--mavlink": o.mavlink = try MAVLinkEndpoint(parsing: a.value(arg))
        case "--bundle": o.bundleFolder = try a.value(arg)
        case "--bundle-seconds": o.bundleSeconds = try a.number(arg, 1...600)
        case "--record-split-mb": o.recordSplitBytes = Int(try a.number(arg, 0.01...1_000_000) * 1_048_576)
        case "--record-split-min": o.recordSplitMicros = UInt64(try a.number(arg, 0.05...100_000) * 60_000_000)
        case "--latency-log": o.latencyLogPath = try a.value(arg)
        case "--snapshot": o.snapshotPath = try a.value(arg)
        case "--status": o.statusSeconds = try a.number(arg, 0...3600)
        case "--clock-offset-ms": o.captureClock = .absolute(offsetMicros: Int64(try a.number(arg, -86_400_000...86_400_000) * 1000))
        case "--clock-offset":
            let v = try a.value(arg)
            guard v == "relative" else { throw CLIError.usage("--clock-offset: '\(v)' (use relative, or --clock-offset-ms N)") }
            o.captureClock = .relative
        case "--metrics":
            let v = try a.value(arg)
            let parts = v.split(separator: ":", omittingEmptySubsequences: false)
            guard let port = UInt16(parts.last ?? ""), parts.count <= 2 else { throw CLIError.usage("--metrics: '\(v)' (use [ADDR:]PORT)") }
            o.metrics = (parts.count == 2 && !parts[0].isEmpty ? String(parts[0]) : "0.0.0.0", port)
        case "--quiet", "-q": o.quiet = true
        case "--verbose", "-v": o.verbose = true
        default: return false
        }
        return true
    }

    /// The window and what it shows. Returns false when `arg` is not one of them.
    private static func windowOption(_ arg: String, _ a: inout Arguments, _ o: inout PlayOptions) throws -> Bool {
        switch arg {
        case "--display":
            let v = try a.value(arg)
            guard let d = PlayOptions.DisplayKind(rawValue: v) else { throw CLIError.usage("--display: '\(v)' (use sdl or none)") }
            o.display = d
        case "--stall-ms": o.stallMillis = try a.number(arg, 50...600_000)
        case "--target-ms": o.targetMillis = try a.number(arg, 1...600_000)
        case "--hide-damaged", "--show-damaged": o.showDamaged = arg == "--show-damaged"
        case "--clock": o.clock = true
        case "--window-pos": o.windowPosition = try a.pair(arg, separator: ",", 0...16384, hint: "X,Y")
        case "--window-size": o.windowSize = try a.pair(arg, separator: "x", 64...8192, hint: "WxH")
        case "--layout":
            let v = try a.value(arg)
            guard let l = WallLayout(parsing: v) else { throw CLIError.usage("--layout: '\(v)' (use CxR, 1 to \(WallLayout.maxSide) each, e.g. 3x2)") }
            o.layout = l
        case "--gravity":
            let v = try a.value(arg)
            guard let g = Gravity(rawValue: v) else { throw CLIError.usage("--gravity: '\(v)' (use letterbox, fill or stretch)") }
            o.gravity = g
        default: return false
        }
        return true
    }
}
