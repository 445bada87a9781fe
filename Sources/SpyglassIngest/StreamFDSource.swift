#if canImport(Glibc)
import Glibc
import SpyglassPipeline
#endif

/// A byte stream read from a descriptor: a file, stdin, or a connected TCP socket.
/// Reads of any size are fine; the Annex B scanner does not care where reads cut.
public final class StreamFDSource: ByteSource {
    public let label: String
    public let deliversInRealTime: Bool
    public private(set) var counters = SourceCounters()
    private var fd: Int32
    private let ownsFD: Bool
    /// A named pipe: until a writer has sent something, end-of-file means "no writer yet".
    var isFIFO = false
    private var gotData = false

    /// Wraps an open descriptor.
    /// - Parameters:
    ///   - fd: readable descriptor.
    ///   - label: name for logs.
    ///   - deliversInRealTime: true for sockets (and live pipes).
    ///   - ownsFD: close it in ``close()``.
    public init(fd: Int32, label: String, deliversInRealTime: Bool, ownsFD: Bool = true) {
        self.fd = fd
        self.label = label
        self.deliversInRealTime = deliversInRealTime
        self.ownsFD = ownsFD
    }

    /// Opens a file for reading. Throws ``SourceError/open(_:)`` ("PATH: No such file or directory").
    public static func file(path: String) throws -> StreamFDSource {
        // O_NONBLOCK: opening a FIFO with no writer must not block (reads then poll as usual).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw SourceError.open("\(path): \(errnoText())") }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            Glibc.close(fd)
            throw SourceError.open("\(path): is a directory")
        }
        let source = StreamFDSource(fd: fd, label: path, deliversInRealTime: false)
        source.isFIFO = (st.st_mode & S_IFMT) == S_IFIFO
        return source
    }

    /// Standard input.
    public static func stdin() -> StreamFDSource {
        StreamFDSource(fd: 0, label: "stdin", deliversInRealTime: false, ownsFD: false)
    }

    /// A pipe or a socket (stdin from another program, a named FIFO) is written live: its idle
    /// gaps end pictures. A regular file's never do.
    public var idleGapsEndPictures: Bool {
        guard !deliversInRealTime else { return true }
        var st = stat()
        guard fd >= 0, fstat(fd, &st) == 0 else { return false }
        return (st.st_mode & S_IFMT) == S_IFIFO || (st.st_mode & S_IFMT) == S_IFSOCK
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard fd >= 0 else { return .end }
        if !waitReadable(fd, timeoutMicros: timeoutMicros) { return .timeout }
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        let now = MonotonicClock.nowMicros()
        if n == 0 && isFIFO && !gotData {
            usleep(UInt32(min(timeoutMicros, 100_000)))
            return .timeout
        }
        if n > 0 {
            gotData = true
            counters.datagrams += 1
            counters.bytes += n
            return .data(count: n, arrivalMicros: now, truncated: false)
        }
        if n == 0 { return .end }
        if errno == EINTR || errno == EAGAIN { return .timeout }
        if errno == ECONNRESET { return .end }
        throw SourceError.read("\(label): read failed: \(errnoText())")
    }

    public func close() {
        if fd >= 0 && ownsFD { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
