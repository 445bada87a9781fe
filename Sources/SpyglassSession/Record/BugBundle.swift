import Foundation
import SpyglassFeed
import SpyglassIngest
import SpyglassPipeline

/// A bug bundle (`play --bundle DIR`, `b` in the window, and at exit): what a user attaches to a
/// report so that what they saw can be seen again. A folder
/// `DIR/spyglass-bundle-NAME-YYYYMMDD-HHMMSSZ/` with
/// - `capture.pcap`: the last seconds of what arrived (``BundleRing``), each datagram (or read)
///   as a UDP packet to the feed's port at its arrival time (``PcapWriter``);
/// - `probe.json`: `spyglass probe --json` of that capture;
/// - `summary.json`: the feed's summary so far (as `--summary` writes it);
/// - `README.txt`: the command that replays it (`spyglass replay capture.pcap --port PORT`).
public enum BugBundle {
    /// Writes a bundle of `ring` for the feed `label` (its URL `url`, its summary now) into `folder`.
    /// - Returns: the bundle's folder.
    /// - Throws: ``SourceError/open(_:)`` when the folder or a file cannot be written, or there is
    ///   nothing in the ring yet.
    public static func write(_ ring: BundleRing, label: String, url: SourceURL, summary: FeedSummary, into folder: String) throws -> String {
        let entries = ring.entries
        guard !entries.isEmpty else { throw SourceError.open("bundle: nothing has arrived from \(label) yet") }
        let dir = (folder.hasSuffix("/") ? folder : folder + "/") + "spyglass-bundle-\(safe(label))-\(stamp(Date()))Z"
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw SourceError.open("bundle: cannot make \(dir): \(error.localizedDescription)")
        }
        let port = udpPort(url) ?? 5600
        try PcapWriter.write(entries.map { ($0.bytes, $0.wallMicros) }, to: dir + "/capture.pcap", port: port)
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try write(try enc.encode(summary), to: dir + "/summary.json")
        let quiet = Log.isQuiet   // the probe quiets the log while it reads; the feeds' lines come back after
        defer { Log.setQuiet(quiet) }
        if let outcome = try? ProbeRun.run(sourceText: dir + "/capture.pcap", options: ReceiverOptions(), duration: 5, port: port, host: nil) {
            try write(try enc.encode(outcome.probe.report), to: dir + "/probe.json")
        }
        let seconds = Double(entries[entries.count - 1].arrivalMicros - entries[0].arrivalMicros) / 1e6
        let readme = """
        Spyglass bug bundle: \(label)
        \(entries.count) datagrams (or reads), \(entries.reduce(0) { $0 + $1.bytes.count }) bytes, the last \(String(format: "%.1f", seconds)) s before it was written.
        Replay what arrived, with its timing:   spyglass replay capture.pcap --port \(port)
        What it holds:                          probe.json (spyglass probe --json capture.pcap --port \(port))
        The feed's numbers when it was written: summary.json

        """
        try write(Data(readme.utf8), to: dir + "/README.txt")
        return dir
    }

    private static func write(_ data: Data, to path: String) throws {
        do { try data.write(to: URL(fileURLWithPath: path)) } catch { throw SourceError.open("bundle: \(path): \(error.localizedDescription)") }
    }

    /// The UDP port a feed listened on (its pcap's destination port), if it was a UDP feed.
    static func udpPort(_ url: SourceURL) -> UInt16? {
        switch url {
        case .udp(_, let port, _): return port
        case .selecting(let inner, _): return udpPort(inner)
        default: return nil
        }
    }

    private static func safe(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" }.split(separator: "-").joined(separator: "-").prefix(60))
    }

    private static func stamp(_ date: Date) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        return f.string(from: date)
    }
}
