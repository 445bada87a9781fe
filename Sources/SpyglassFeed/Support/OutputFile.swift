#if canImport(Glibc)
import Glibc
import SpyglassIngest
#endif

/// A file written with plain `write(2)`, so that every failure (full disk, `/dev/full`,
/// a closed pipe) is seen and reported, never lost in a buffer.
public final class OutputFile {
    public let path: String
    private var fd: Int32
    /// True once a write failed.
    public private(set) var failed = false
    /// The first error, as text.
    public private(set) var error: String?
    /// Bytes written so far (the end of the file, for ``truncate(to:)``).
    public private(set) var offset = 0

    /// Creates or truncates `path`. Throws ``SourceError/open(_:)`` ("PATH: cannot create: …").
    public init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SourceError.open("\(path): cannot create: \(errnoText())") }
    }

    deinit { close() }

    /// Appends bytes; on failure remembers the error and stops writing.
    public func write(_ bytes: [UInt8]) {
        guard fd >= 0, !failed else { return }
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                failed = true
                error = errnoText()
                return
            }
            off += n
        }
        offset += bytes.count
    }

    /// Cuts the file back to `offset` bytes and goes on writing there.
    /// - Returns: false when the file cannot be cut (a pipe, a terminal) or the offset is past the end.
    public func truncate(to newOffset: Int) -> Bool {
        guard fd >= 0, !failed, newOffset <= offset, ftruncate(fd, off_t(newOffset)) == 0,
              lseek(fd, off_t(newOffset), SEEK_SET) == off_t(newOffset) else { return false }
        offset = newOffset
        return true
    }

    /// Appends UTF-8 text.
    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Closes the file (a failing close counts as a failed write).
    public func close() {
        guard fd >= 0 else { return }
        if Glibc.close(fd) != 0 && !failed { failed = true; error = errnoText() }
        fd = -1
    }
}
