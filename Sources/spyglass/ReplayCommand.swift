import Foundation
import SpyglassCore

/// `spyglass replay RECORDING`: a recording made with `--record`, at its original timing.
@MainActor func runReplay(_ argv: [String]) throws -> Int32 {
    var rest: [String] = []
    var speed = 1.0
    var loop = false
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
        case "--from": from = try a.number(arg, 0...1e9)
        case "--to": to = try a.number(arg, 0...1e9)
        default: rest.append(arg)
        }
    }
    if let f = from, let t = to, t <= f { throw CLIError.usage("replay: --to (\(t)) must be after --from (\(f))") }
    let (urls, options) = try PlayArguments.parse(rest)
    guard urls.count == 1, let url = urls.first, case .file(let path) = url else {
        FileHandle.standardError.write(Data("spyglass: error: replay takes a recording file\n".utf8))
        return 1
    }
    if isPacketCapture(path) {
        return replayCapture(path, url: url, options: options, port: pcapPort, host: pcapHost, sendTo: sendTo, speed: speed)
    }
    guard RecordingIndex.load(streamPath: path) != nil else {
        // A plain Annex B file: play it at its VUI rate (or --fps), scaled by --speed.
        var o = options
        if speed != 1 { o.receiver.fps = (o.receiver.fps ?? 30) * speed }
        return PlaySession(urls: [url], options: o).run()
    }
    do {
        let source = try RecordingSource(streamPath: path, speed: speed, untimed: options.receiver.untimed, loop: loop,
                                         fromSeconds: from, toSeconds: to)
        if source.index.repaired > 0 {
            Log.info("\(path): index repaired (\(source.index.repaired) torn or incomplete entries dropped)")
        }
        Log.info(String(format: "replaying %d access units (%.1f s) at %.2fx", source.index.entries.count, source.durationSeconds, speed))
        if let f = from, f > source.durationSeconds {
            Log.info(String(format: "warning: --from %.1f s is past the end (%.1f s): playing from the last keyframe", f, source.durationSeconds))
        }
        var o = options
        o.receiver.idleFlushMicros = max(o.receiver.idleFlushMicros, 1_000)
        return PlaySession(urls: [url], options: o).run(openedSource: source)
    } catch {
        Log.error("\(error)")
        return 1
    }
}

/// pcap and pcapng files, by their magic numbers.
func isPacketCapture(_ path: String) -> Bool {
    guard let h = FileHandle(forReadingAtPath: path), let d = try? h.read(upToCount: 4), d.count == 4 else { return false }
    let m = [UInt8](d)
    return m == [0xD4, 0xC3, 0xB2, 0xA1] || m == [0xA1, 0xB2, 0xC3, 0xD4] || m == [0x4D, 0x3C, 0xB2, 0xA1]
        || m == [0xA1, 0xB2, 0x3C, 0x4D] || m == [0x0A, 0x0D, 0x0D, 0x0A]
}

/// `spyglass replay capture.pcap`: the chosen UDP flow through the same pipeline, with the
/// original inter-packet timing, or re-emitted on the network with `--send`.
@MainActor func replayCapture(_ path: String, url: SourceURL, options: PlayOptions, port: UInt16?, host: String?,
                   sendTo: String?, speed: Double) -> Int32 {
    let source: PcapSource
    do {
        source = try PcapSource(path: path, port: port, host: host, speed: options.receiver.untimed ? 0 : speed)
    } catch {
        FileHandle.standardError.write(Data("spyglass: error: \(error)\n".utf8))
        return 1
    }
    let c = source.counts
    Log.info("\(path): \(c.packets) packets; flow \(source.flow?.description ?? "?") with \(source.schedule.count) datagrams"
             + "; \(c.otherFlows) in other flows, \(c.nonUDP) not UDP, \(c.truncated) truncated, \(c.fragmentsReassembled) reassembled from fragments, \(c.fragmentsDropped) incomplete")
    if let sendTo {
        do {
            let sender = try StreamSender(destination: try SourceURL(parsing: sendTo))
            let start = MonotonicClock.nowMicros()
            let t0 = source.schedule.first?.time ?? 0
            for d in source.schedule {
                if speed > 0 { MonotonicClock.sleep(untilMicros: start + UInt64(Double(d.time - t0) / speed)) }
                sender.sendDatagrams([d.payload])
            }
            Log.info("re-sent \(sender.datagramsSent) datagrams to \(sendTo)")
            return 0
        } catch {
            Log.error("\(error)")
            return 1
        }
    }
    return PlaySession(urls: [url], options: options).run(openedSource: source)
}
