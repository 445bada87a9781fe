import Foundation
import SpyglassDisplay
import SpyglassSession
#if canImport(Glibc)
import Glibc
import SpyglassBitstream
import SpyglassTransport
import SpyglassIngest
#endif

let sendUsage = """
usage: spyglass send pattern|FILE udp://HOST:PORT[?iface=NAME|ADDR]|tcp://HOST:PORT|tcp://[ADDR]:PORT?listen|
                                  srt://HOST:PORT|srt://[ADDR]:PORT?mode=listener[&latency=MS&passphrase=…&streamid=ID] [options]
       spyglass send pattern|FILE udp://HOST:PORT udp://HOST2:PORT2 … [options]   (every datagram to each, in turn)

Streams raw Annex B (or RTP with --rtp) at real-time pace. Each access unit of the pattern carries an ST 0604
precision time stamp SEI with its capture instant; a file keeps its own SEI (--stamp adds ours).
  --codec h264|h265     pattern codec (default h264, libx264/libx265 zero-latency)
  --size WxH            pattern size (default 1280x720)
  --fps N               frames per second (pattern default 30; file default: its VUI rate)
  --bitrate N[k|M]      pattern bitrate (default 4M)
  --slices N            slices per picture (default 1)
  --intra-refresh       periodic intra refresh instead of IDR pictures
  --keyint N            keyframe interval in frames (default 2 s)
  --preset NAME         x264/x265 preset (default ultrafast: the sender's share stays small)
  --duration S          stop after S seconds (default: forever for pattern, once for a file)
  --loop                repeat a file
  --stamp               add our time stamp SEI to a file's access units
  --mpegts              wrap in MPEG-TS (ISO/IEC 13818-1; 7 x 188 bytes a UDP datagram or SRT message), as broadcast
                        and drone encoders do (always on for srt://, which carries MPEG-TS)
  --klv LAT,LON,ALT,HDG with --mpegts: a MISB ST 0601 KLV local set with each access unit (STANAG 4609):
                        sensor position (degrees, metres), platform heading, capture time as tag 2
  --clock-offset-ms N   stamp as if this machine's clock ran N ms ahead (negative: behind), as an
                        unsynchronized drone would
  --mtu N               largest UDP datagram payload (default 1400)
  --rtp                 RTP packetization (RFC 6184 mode 1 / RFC 7798: single NAL unit and FU packets,
                        marker bit on the last packet of each access unit, payload type 96)
"""

/// Parses "4M", "800k", "2000000".
func parseBitrate(_ s: String) -> Int? {
    let lower = s.lowercased()
    var mult = 1.0
    var num = lower
    if lower.hasSuffix("m") { mult = 1e6; num.removeLast() } else if lower.hasSuffix("k") { mult = 1e3; num.removeLast() }
    guard let v = Double(num), v > 0, v * mult < 1e10 else { return nil }
    return Int(v * mult)
}

/// Parses a test-pattern size "WxH": even, from 16x16 up to ``PictureSizeCap/default`` (what a
/// receiver accepts without `--max-size`).
func parseSize(_ s: String, flag: String) throws -> (Int, Int) {
    let parts = s.split(separator: "x").compactMap { Int($0) }
    let cap = PictureSizeCap.default
    guard parts.count == 2, parts[0] >= 16, parts[1] >= 16, parts[0] <= cap.width, parts[1] <= cap.height,
          parts[0] % 2 == 0, parts[1] % 2 == 0 else { throw CLIError.usage("\(flag): '\(s)' (use even WxH, 16x16 to \(cap))") }
    return (parts[0], parts[1])
}

/// Pattern options shared by `send` and `bench`. Returns true when `arg` was one of them.
func parsePatternOption(_ arg: String, _ a: inout Arguments, _ s: inout VideoEncoder.Settings) throws -> Bool {
    switch arg {
    case "--codec":
        let v = try a.value(arg)
        switch v {
        case "h264", "avc": s.codec = .h264
        case "h265", "hevc": s.codec = .h265
        default: throw CLIError.usage("--codec: '\(v)' (use h264 or h265)")
        }
    case "--size": (s.width, s.height) = try parseSize(try a.value(arg), flag: arg)
    case "--fps":
        s.fps = try a.integer(arg, 1...240)
    case "--bitrate":
        let v = try a.value(arg)
        guard let b = parseBitrate(v) else { throw CLIError.usage("--bitrate: '\(v)'") }
        s.bitrate = b
    case "--slices": s.slices = try a.integer(arg, 1...64)
    case "--intra-refresh": s.intraRefresh = true
    case "--keyint": s.keyint = try a.integer(arg, 1...10_000)
    case "--preset":
        let v = try a.value(arg)
        let known = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
        guard known.contains(v) else { throw CLIError.usage("--preset: '\(v)' (use one of \(known.joined(separator: ", ")))") }
        s.preset = v
    default: return false
    }
    return true
}

/// `send`'s arguments: what to send, where, and how.
struct SendArguments {
    var settings = VideoEncoder.Settings()
    var positional: [String] = []
    var duration: Double?
    var loop = false, stamp = false, rtp = false, mpegts = false
    var klv: PlatformMetadata?
    var clockOffsetMicros: Int64 = 0
    var mtu = 1400
    var fileFPS: Double?

    /// Parses `send`'s arguments; nil when `--help` was asked (and printed).
    /// - Throws: ``CLIError/usage(_:)`` with a one-line message.
    static func parse(_ argv: [String]) throws -> SendArguments? {
        var a = Arguments(args: argv)
        var o = SendArguments()
        while let arg = a.next() {
            if arg == "--fps" {
                let f = try a.integer(arg, 1...240)
                o.settings.fps = f; o.fileFPS = Double(f)
                continue
            }
            if try parsePatternOption(arg, &a, &o.settings) { continue }
            switch arg {
            case "--duration": o.duration = try a.number(arg, 0.1...1_000_000)
            case "--loop": o.loop = true
            case "--stamp": o.stamp = true
            case "--clock-offset-ms": o.clockOffsetMicros = Int64(try a.number(arg, -86_400_000...86_400_000) * 1000)
            case "--rtp": o.rtp = true
            case "--mpegts": o.mpegts = true
            case "--klv": o.klv = try klvPosition(a.value(arg))
            case "--mtu": o.mtu = try a.integer(arg, 64...65_507)
            case "-h", "--help": print(sendUsage); return nil
            default:
                if arg.hasPrefix("--") { throw CLIError.usage("unknown option \(arg)\(Suggestion.didYouMean(arg, among: Suggestion.options(in: sendUsage)))") }
                o.positional.append(arg)
            }
        }
        guard o.positional.count >= 2 else { throw CLIError.usage("send needs SOURCE and DEST\n\(sendUsage)") }
        return o
    }
}

func runSend(_ argv: [String]) throws -> Int32 {
    guard let o = try SendArguments.parse(argv) else { return 0 }
    let what = o.positional[0]
    if what != "pattern" && !SendRun.sendableFile(what) { return 1 }
    let dest: SourceURL
    do { dest = try SourceURL(parsing: o.positional[1]) } catch {
        let why = "\(error)", shown = SRTURL.redacting(o.positional[1])
        Log.error(why.hasPrefix(shown) ? why : "\(shown): \(why)")
        return 1
    }
    var run = SendRun(input: what == "pattern" ? .pattern(o.settings) : .file(path: what, fps: o.fileFPS, loop: o.loop),
                      destination: dest)
    do { run.alsoTo = try o.positional.dropFirst(2).map { try SourceURL(parsing: $0) } } catch {
        Log.error("\(error)")
        return 1
    }
    run.mtu = o.mtu
    run.stamp = o.stamp
    run.clockOffsetMicros = o.clockOffsetMicros
    run.rtp = o.rtp
    run.mpegts = o.mpegts
    run.klv = o.klv
    run.durationSeconds = o.duration
    return run.run()
}

/// `--klv LAT,LON,ALT,HDG`: the position a KLV local set reports.
/// - Throws: ``CLIError/usage(_:)`` for anything but four numbers in range.
func klvPosition(_ text: String) throws -> PlatformMetadata {
    let v = text.split(separator: ",").compactMap { Double($0) }
    guard v.count == 4, abs(v[0]) <= 90, abs(v[1]) <= 180, (-900...19_000).contains(v[2]), (0...360).contains(v[3]) else {
        throw CLIError.usage("--klv wants LAT,LON,ALT_M,HEADING (e.g. 47.3977,8.5456,500,90)")
    }
    return PlatformMetadata(headingDegrees: v[3], latitudeDegrees: v[0], longitudeDegrees: v[1], altitudeMeters: v[2])
}
