import Foundation
import SpyglassCore

/// `spyglass replay RECORDING`: a recording made with `--record`, at its original timing.
func runReplay(_ argv: [String]) throws -> Int32 {
    var rest: [String] = []
    var speed = 1.0
    var loop = false
    var from: Double?, to: Double?
    var a = Arguments(args: argv)
    while let arg = a.next() {
        switch arg {
        case "--speed": speed = try a.number(arg, 0.25...4)
        case "--loop": loop = true
        case "--from": from = try a.number(arg, 0...1e9)
        case "--to": to = try a.number(arg, 0...1e9)
        default: rest.append(arg)
        }
    }
    let (url, options) = try parsePlay(rest)
    guard case .file(let path) = url else {
        FileHandle.standardError.write(Data("spyglass: error: replay takes a recording file\n".utf8))
        return 1
    }
    guard RecordingIndex.load(streamPath: path) != nil else {
        // A plain Annex B file: play it at its VUI rate (or --fps), scaled by --speed.
        var o = options
        if speed != 1 { o.receiver.fps = (o.receiver.fps ?? 30) * speed }
        return PlaySession(url: url, options: o).run()
    }
    do {
        let source = try RecordingSource(streamPath: path, speed: speed, untimed: options.receiver.untimed, loop: loop,
                                         fromSeconds: from, toSeconds: to)
        if source.index.repaired > 0 {
            Log.info("\(path): index repaired (\(source.index.repaired) torn or incomplete entries dropped)")
        }
        Log.info(String(format: "replaying %d access units (%.1f s) at %.2fx", source.index.entries.count, source.durationSeconds, speed))
        var o = options
        o.receiver.idleFlushMicros = max(o.receiver.idleFlushMicros, 1_000)
        return PlaySession(url: url, options: o).run(openedSource: source)
    } catch {
        Log.error("\(error)")
        return 1
    }
}
