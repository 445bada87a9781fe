import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SpyglassIngest

/// Appends `.tlog` records (``TLog/record(frame:utcMicros:)``) to a file as they come, one
/// `write(2)` each: a crash loses nothing that was received. A failed write stops the log with
/// one line; the feed goes on.
public final class TLogWriter: Sendable {
    /// The file's path.
    public let path: String
    private let fd: Mutex<Int32>

    /// Creates (or truncates) the file.
    /// - Throws: ``SourceError/open(_:)`` when it cannot be created.
    public init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SourceError.open("\(path): \(String(cString: strerror(errno)))") }
        self.path = path
        self.fd = Mutex(fd)
    }

    /// The `.tlog` beside a recording: `NAME.mkv` (or `.ts`, `.mp4`, `.h264`, `.h265`, none) →
    /// `NAME.tlog`, as MAVProxy and Mission Planner name theirs.
    public static func path(besideRecording recording: String) -> String {
        let known = [".mkv", ".ts", ".mp4", ".mov", ".h264", ".h265", ".264", ".265"]
        let base = known.first { recording.lowercased().hasSuffix($0) }.map { String(recording.dropLast($0.count)) } ?? recording
        return base + ".tlog"
    }

    /// The `.tlog` a replay of `recording` draws from: `NAME.tlog` beside it, or for one file of
    /// a split recording (`NAME-001.mkv`) the split's `NAME.tlog`; nil when there is none.
    public static func existing(forRecording recording: String) -> String? {
        let beside = path(besideRecording: recording)
        if FileManager.default.fileExists(atPath: beside) { return beside }
        let base = String(beside.dropLast(5))
        guard let dash = base.lastIndex(of: "-"), base[base.index(after: dash)...].allSatisfy(\.isNumber),
              base.index(after: dash) < base.endIndex else { return nil }
        let split = String(base[..<dash]) + ".tlog"
        return FileManager.default.fileExists(atPath: split) ? split : nil
    }

    /// A write failed (a full disk): the log stopped there.
    public var failed: Bool { fd.withLock { $0 == -2 } }

    /// Appends one record; after a failed write, nothing more.
    public func append(_ record: [UInt8]) {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            let n = record.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n != record.count {
                Log.error("\(path): \(n < 0 ? String(cString: strerror(errno)) : "short write"): telemetry log stopped")
                Glibc.close(fd)
                fd = -2
            }
        }
    }

    /// Closes the file (once; later calls and appends do nothing).
    public func close() {
        fd.withLock { fd in
            if fd >= 0 {
                Glibc.close(fd)
                fd = -1
            }
        }
    }

    deinit { close() }
}
