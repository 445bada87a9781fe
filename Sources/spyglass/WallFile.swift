import Foundation
import SpyglassFeed
import SpyglassSession
import SpyglassTransport
import SpyglassIngest

/// `--wall FILE`: the feeds of a wall, one per line, written by hand.
///
/// ```
/// # front of the building
/// udp://:5600  name="Front door" --codec h264 --target-ms 120
/// rtsp://cam2/main  name=Yard --record yard
/// udp://:5602  --sdp drone.sdp --allow-from 10.0.0.0/8
/// ```
/// A line is a source followed by per-feed options: `name=TEXT` (double quotes for spaces) and
/// the receive options `--codec`, `--sdp`, `--allow-from` (repeatable), `--rtp`/`--raw`,
/// `--reorder-ms`, `--rtp-ext`, `--join-timeout-ms`, plus `--record PATH` and `--target-ms MS`. `#` starts a
/// comment; blank lines are skipped. Options on the command line apply to every feed first.
enum WallFile {
    /// One feed of the file.
    struct Entry {
        var line: Int
        var source: SourceURL
        var options: PlayOptions
    }

    /// Options a wall line may carry besides `name=`.
    static let perFeedOptions = ["--codec", "--sdp", "--allow-from", "--rtp", "--raw", "--reorder-ms", "--rtp-ext",
                                 "--join-timeout-ms", "--record", "--target-ms", "--mavlink"]

    /// Reads and parses the wall file at `path`.
    /// - Parameters: base: the command line's options, which every feed starts from.
    /// - Throws: ``CLIError/usage(_:)`` naming the file and line for a bad line, an unreadable
    ///   file or one with no feed.
    static func read(_ path: String, base: PlayOptions) throws -> [Entry] {
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &folder) else { throw CLIError.usage("--wall \(path): no such file") }
        guard !folder.boolValue else { throw CLIError.usage("--wall \(path): is a folder, not a wall file") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError.usage("--wall \(path): cannot open it (permission denied?)") }
        defer { try? handle.close() }
        // A person writes a wall file by hand: 1 MiB is far more than any (and /dev/zero ends here).
        let data = (try? handle.read(upToCount: Self.largestFileBytes + 1)) ?? Data()
        guard data.count <= Self.largestFileBytes else { throw CLIError.usage("--wall \(path): larger than 1 MiB, not a wall file") }
        guard let text = String(data: data, encoding: .utf8) else { throw CLIError.usage("--wall \(path): not UTF-8 text") }
        let entries = try parse(text, base: base, file: path)
        guard !entries.isEmpty else { throw CLIError.usage("--wall \(path): no feed in it (one SOURCE per line)") }
        return entries
    }

    /// The largest wall file read, bytes.
    static let largestFileBytes = 1 << 20

    /// Parses wall-file text (`file` names it in errors). Lines end with LF or CR LF.
    static func parse(_ text: String, base: PlayOptions, file: String) throws -> [Entry] {
        var entries: [Entry] = []
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let where_ = "\(file):\(i + 1)"
            let words = try tokens(String(raw), at: where_)
            guard let source = words.first else { continue }
            guard !source.isEmpty else { throw CLIError.usage("\(where_): an empty SOURCE (\"\")") }
            if source.hasPrefix("-") || source.hasPrefix("name=") { throw CLIError.usage("\(where_): a line starts with its SOURCE, not '\(source)'") }
            let url: SourceURL
            do { url = try SourceURL(parsing: source) } catch { throw CLIError.usage("\(where_): \(source): \(error)") }
            var o = base
            try apply(Array(words.dropFirst()), to: &o, at: where_)
            // A path with {n} becomes each feed's own; only the same fixed path twice is a clash.
            if let record = o.recordPath, !record.contains("{n}"), let other = entries.first(where: { $0.options.recordPath == record }) {
                throw CLIError.usage("\(where_): --record \(record) is also the recording of line \(other.line)")
            }
            entries.append(Entry(line: i + 1, source: url, options: o))
        }
        return entries
    }

    /// The line's words: split at blanks, `"…"` keeps blanks, `#` outside quotes ends the line.
    static func tokens(_ line: String, at where_: String) throws -> [String] {
        var words: [String] = [], word = "", quoted = false, inWord = false
        for c in line {
            if c == "\"" { quoted.toggle(); inWord = true; continue }
            if !quoted && c == "#" { break }
            if !quoted && (c == " " || c == "\t" || c == "\r") {
                if inWord { words.append(word); word = ""; inWord = false }
                continue
            }
            word.append(c); inWord = true
        }
        if quoted { throw CLIError.usage("\(where_): a quote is not closed") }
        if inWord { words.append(word) }
        return words
    }

    private static func apply(_ words: [String], to o: inout PlayOptions, at where_: String) throws {
        var a = Arguments(args: words)
        while let w = a.next() {
            do {
                if w.hasPrefix("name=") {
                    let name = String(w.dropFirst(5))
                    guard !name.isEmpty else { throw CLIError.usage("name= needs a name") }
                    o.feedName = name
                } else if !perFeedOptions.contains(w) {
                    throw CLIError.usage("'\(w)' is not a per-feed option (use name=, \(perFeedOptions.joined(separator: ", ")))")
                } else if w == "--record" {
                    o.recordPath = try a.value(w)
                } else if w == "--mavlink" {
                    o.mavlink = try MAVLinkEndpoint(parsing: a.value(w))
                } else if w == "--target-ms" {
                    o.targetMillis = try a.number(w, 1...600_000)
                } else if w == "--sdp" {
                    let path = try a.value(w)
                    do { o.receiver.sdp = try SessionDescription(path: path) } catch { throw CLIError.usage("--sdp: \(error)") }
                } else {
                    _ = try PlayArguments.receiverOption(w, &a, &o.receiver)
                }
            } catch {
                throw CLIError.usage("\(where_): \(error)")
            }
        }
    }
}
