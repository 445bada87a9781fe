import Foundation
import SpyglassSession

let replayUsage = """
usage: spyglass replay RECORDING [--speed X] [--loop] [--from S] [--to S] [--autoexit] [play options]
       spyglass replay CAPTURE.pcap|.pcapng [--port N] [--host ADDR] [--send udp://HOST:PORT] [--speed X]

A recording made with `play --record` (RECORDING.h264/.h265 and its .idx) plays with every
access unit at its recorded arrival time, with the live latency analysis again (--latency-log);
a container (.mkv, .mp4, .mov, .ts: ours, a phone's, a drone's) at its own time stamps.
A packet capture (tcpdump, Wireshark) plays its UDP flow through the same pipeline.

  --speed X           0.25 to 4 times the recorded speed (default 1; `[` and `]` halve or double it)
  --loop              start again at the end
  --autoexit          close the window at the end (without it the last picture stays until q)
  --from S, --to S    play only seconds S to S of the recording (from the keyframe before --from)
  --port N            the capture's UDP flow to port N (default: the one with the most datagrams)
  --host ADDR         the capture's flow from or to ADDR
  --send udp://HOST:PORT  send the capture's datagrams there at their recorded times instead of playing them

Keys: space pause, . one frame, left/right 5 s back or on, [ ] half or double speed, plus play's keys.
A NAME.tlog beside the recording (play --mavlink … --record NAME) is drawn as the OSD in step with the pictures.
Every `spyglass play` option applies too (spyglass play --help).
"""

/// `spyglass replay RECORDING`: a recording made with `--record`, at its original timing.
@MainActor func runReplay(_ argv: [String]) throws -> Int32 {
    if argv.contains("--help") || argv.contains("-h") { print(replayUsage); return 0 }
    var rest: [String] = []
    var speed = 1.0
    var loop = false, autoexit = false
    var from: Double?, to: Double?
    var pcapPort: UInt16?, pcapHost: String?, sendTo: String?
    var a = Arguments(args: argv)
    while let arg = a.next() {
        switch arg {
        case "--port": pcapPort = UInt16(try a.integer(arg, 1...65535))
        case "--host": pcapHost = try a.value(arg)
        case "--send": sendTo = try a.value(arg)
        case "--speed": speed = try a.number(arg, 0.25...4)
        case "--loop": loop = true
        case "--autoexit": autoexit = true
        case "--from": from = try a.number(arg, 0...1e9)
        case "--to": to = try a.number(arg, 0...1e9)
        default: rest.append(arg)
        }
    }
    if let f = from, let t = to, t < f { throw CLIError.usage("replay: --to (\(t)) must not be before --from (\(f))") }
    guard rest.contains(where: { !$0.hasPrefix("-") }) else { throw CLIError.usage("replay needs a RECORDING (a file made with play --record, or a .pcap)") }
    let (urls, options) = try PlayArguments.parse(rest)
    guard urls.count == 1, let url = urls.first, case .file(let path) = url else {
        FileHandle.standardError.write(Data("spyglass: error: replay takes a recording file\n".utf8))
        return 1
    }
    var what = Replay.What(speed: speed, loop: loop, fromSeconds: from, toSeconds: to, port: pcapPort, host: pcapHost, sendTo: sendTo)
    what.autoexit = autoexit
    return Replay.run(path, url: url, options: options, what)
}
