import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `--record NAME` never overwrites an earlier recording: a restarted receiver (a crash, a
/// service restarted by systemd, an operator pressing the same button twice) would otherwise
/// truncate the last flight's file. When anything `NAME` would write exists already, the
/// recording takes the first free `NAME-2`, `NAME-3`, … instead, as DVRs and cameras do.
public enum RecordingName {
    /// The path to record into for `--record path`: `path` itself when none of its files exist,
    /// else `path` with the first free `-2`, `-3`, … before its extension (`flight.mkv` →
    /// `flight-2.mkv`, `flight` → `flight-2`, which records to `flight-2.mkv`).
    /// - Parameters:
    ///   - path: what `--record` was given, with `{n}` already expanded.
    ///   - exists: whether a recording is there: a regular file (a FIFO or a device given as
    ///     the path is written into, as asked); the file system's answer unless a test gives one.
    public static func unused(_ path: String, exists: (String) -> Bool = isRegularFile) -> String {
        guard taken(path, exists) else { return path }
        let (stem, ext) = split(path)
        var k = 2
        while taken("\(stem)-\(k)\(ext)", exists) { k += 1 }
        return "\(stem)-\(k)\(ext)"
    }

    /// The names the feeds of this process record into (each recording's files).
    private static let claimed = Mutex<Set<String>>([])

    /// ``unused(_:exists:)`` for a feed about to record: it also passes over the names another
    /// feed of this process has taken (a wall's `--record w` and `--record w-2` with `w.mkv`
    /// there would otherwise both be `w-2`), and takes the one it returns.
    public static func claim(_ path: String) -> String {
        claimed.withLock { taken in
            let chosen = unused(path) { isRegularFile($0) || taken.contains($0) }
            taken.formUnion(flightRecordingFiles(path: chosen))
            return chosen
        }
    }

    /// Whether `path` is a regular file (`stat(2)`, following links).
    public static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether any file a recording into `path` starts with is there: the recording (or the raw
    /// stream and its index), the first file of a split recording, the `.tlog` beside it.
    static func taken(_ path: String, _ exists: (String) -> Bool) -> Bool {
        var files = flightRecordingFiles(path: path) + [TLogWriter.path(besideRecording: path)]
        if recordsRawStream(path) {
            // As Recorder names them: PATH, with .h264/.h265 added unless it ends so; split, STEM-000.h264.
            for ext in [".h264", ".h265"] {
                let name = path.hasSuffix(ext) ? path : path + ext
                files.append(String(name.dropLast(ext.count)) + "-000" + ext)
            }
        } else {
            let (stem, ext) = split(ContainerRecorder.fileName(for: path))
            files.append("\(stem)-000\(ext)")
        }
        return files.contains(where: exists)
    }

    /// `path` as stem and extension, when the extension is one `--record` knows (`.mkv`, `.ts`,
    /// `.mp4`, `.mov`, `.h264`, `.h265`, `.264`, `.265`, `.hevc`); else the whole path and "".
    static func split(_ path: String) -> (stem: String, ext: String) {
        let ext = FilePath.fileExtension(path)
        guard !ext.isEmpty, recordsRawStream(path) || ContainerWriter.Container(rawValue: ext) != nil else { return (path, "") }
        return (String(path.dropLast(ext.count + 1)), String(path.suffix(ext.count + 1)))   // as spelled (.MKV)
    }
}
