import Foundation
import SpyglassFeed
import SpyglassSession
import Synchronization
import SpyglassBitstream
import SpyglassIngest

let probeUsage = """
usage: spyglass probe SOURCE [--duration S] [--json] [--codec h264|h265] [--rtp|--raw] [--port N] [--host H] [--mavlink URL]

What a stream holds: codec, profile and level, size, bit depth and chroma, frame rate (VUI and
measured), GOP (keyframe interval, recovery points, intra refresh, open GOP), slices per picture,
B-frames and reorder depth, SEI types, time stamps, bitrate; for live sources datagram sizes and
RTP loss; and every error found. Files and packet captures (pcap/pcapng; --port/--host pick the
UDP flow) are read to the end; live sources for --duration (5 s). --mavlink URL (with or without a
SOURCE) also summarises a MAVLink input: vehicle, autopilot, mode, message rates, CRC errors.
"""

/// `probe`'s arguments.
struct ProbeArguments {
    var options = ReceiverOptions()
    var duration = 5.0
    var json = false
    var sourceText = ""
    var port: UInt16?, host: String?, mavlink: MAVLinkEndpoint?

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
            case "--mavlink": mavlink = try MAVLinkEndpoint(parsing: a.value(arg))
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
        guard source != nil || mavlink != nil else { throw CLIError.usage("probe needs a SOURCE\n\(probeUsage)") }
        sourceText = source ?? ""
    }
}

/// `spyglass probe`: parses the arguments, runs ``ProbeRun``, prints what it saw.
func runProbe(_ argv: [String]) throws -> Int32 {
    let args = try ProbeArguments(argv)
    let telemetry = try args.mavlink.map { try TelemetryProbe(endpoint: $0, duration: args.duration) }
    guard !args.sourceText.isEmpty else {
        print(try ProbeOutput.text(nil, telemetry: telemetry, json: args.json))
        return 0
    }
    let outcome: ProbeRun.Outcome
    do {
        outcome = try ProbeRun.run(sourceText: args.sourceText, options: args.options, duration: args.duration,
                                   port: args.port, host: args.host)
    } catch ProbeRun.Failure.open(let text) {
        let shown = SRTURL.redacting(args.sourceText)
        Log.error(text.hasPrefix(shown) ? text : "\(shown): \(text)")
        return 1
    } catch {
        Log.error("\(error)")
        return 1
    }
    print(try ProbeOutput.text(outcome, telemetry: telemetry, json: args.json))
    return outcome.probe.report.accessUnits > 0 ? 0 : 1
}
