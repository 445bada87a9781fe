import Foundation

/// `--record NAME` never overwrites an earlier recording: a restarted receiver (a crash, a
/// service restarted by systemd, an operator pressing the same button twice) would otherwise
/// truncate the last flight's file. When anything `NAME` would write exists already, the
/// recording takes the first free `NAME-2`, `NAME-3`, … instead, as DVRs and cameras do.
public enum RecordingName {
    /// The path to record into for `--record path`: `path` itself when none of its files exist,
    /// else `path` with `-2`, `-3`, … before its extension (`flight.mkv` → `flight-2.mkv`,
    /// `flight` → `flight-2`, which records to `flight-2.mkv`). Up to `-9999`, then `path`.
    /// - Parameters:
    ///   - path: what `--record` was given, with `{n}` already expanded.
    ///   - exists: whether a file exists (the file system's answer, unless a test gives another).
    public static func unused(_ path: String, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        guard taken(path, exists) else { return path }
        let (stem, ext) = split(path)
        for k in 2...9999 {
            let candidate = "\(stem)-\(k)\(ext)"
            if !taken(candidate, exists) { return candidate }
        }
        return path
    }

    /// Whether any file a recording into `path` starts with is there: the recording (or the raw
    /// stream and its index), the first file of a split recording, the `.tlog` beside it.
    static func taken(_ path: String, _ exists: (String) -> Bool) -> Bool {
        var files = flightRecordingFiles(path: path) + [TLogWriter.path(besideRecording: path)]
        let (stem, ext) = split(recordsRawStream(path) ? path : ContainerRecorder.fileName(for: path))
        files.append("\(stem)-000\(ext)")
        return files.contains(where: exists)
    }

    /// `path` as stem and extension, when the extension is one `--record` knows (`.mkv`, `.ts`,
    /// `.mp4`, `.mov`, `.h264`, `.h265`, `.264`, `.265`, `.hevc`); else the whole path and "".
    static func split(_ path: String) -> (stem: String, ext: String) {
        let ext = FilePath.fileExtension(path)
        guard !ext.isEmpty, recordsRawStream(path) || ContainerWriter.Container(rawValue: ext) != nil else { return (path, "") }
        return (String(path.dropLast(ext.count + 1)), "." + ext)
    }
}
