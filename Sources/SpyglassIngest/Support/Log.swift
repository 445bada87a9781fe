#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One-line messages to stderr, prefixed with `spyglass:`.
public enum Log {
    private static let quiet = Atomic<Bool>(false)
    private static let written = Atomic<Int>(0)
    private static let namesFeeds = Atomic<Bool>(false)

    /// The calling thread's feed number (thread-specific data; 0 = not a feed's thread).
    private static let feedKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// With several feeds, each line written on a feed's thread (see ``setFeedOfThisThread(_:)``)
    /// starts with "feed N: ", so that a reader can tell the feeds apart.
    public static func setNamesFeeds(_ on: Bool) { namesFeeds.store(on, ordering: .relaxed) }

    /// Marks the calling thread as feed `id`'s (``Pipeline/start()`` does, on the feed's thread).
    public static func setFeedOfThisThread(_ id: Int) {
        pthread_setspecific(feedKey, UnsafeRawPointer(bitPattern: id))
    }

    /// "feed N: " on a feed's thread when feeds are named, else "".
    private static var feedPrefix: String {
        guard namesFeeds.load(ordering: .relaxed) else { return "" }
        let id = Int(bitPattern: pthread_getspecific(feedKey))
        return id > 0 ? "feed \(id): " : ""
    }

    /// Lines written by ``info(_:)`` and ``error(_:)`` so far (a status block redrawn in place
    /// on a terminal starts afresh below any line written since it was drawn).
    public static var linesWritten: Int { written.load(ordering: .relaxed) }

    /// Silences ``info(_:)`` (errors still print).
    public static func setQuiet(_ q: Bool) { quiet.store(q, ordering: .relaxed) }
    /// Whether info lines are suppressed now (``setQuiet(_:)``).
    public static var isQuiet: Bool { quiet.load(ordering: .relaxed) }

    /// An informational line.
    public static func info(_ message: String) {
        if quiet.load(ordering: .relaxed) { return }
        written.add(1, ordering: .relaxed)
        writeStandardError("spyglass: \(feedPrefix)\(message)\n")
    }

    /// An error line (always printed).
    public static func error(_ message: String) {
        written.add(1, ordering: .relaxed)
        writeStandardError("spyglass: \(feedPrefix)error: \(message)\n")
    }
}

/// Writes `text` to file descriptor 2 in one `write(2)` call, so that lines from several
/// threads never interleave (stdio's `stderr` is shared mutable state Swift 6 will not touch).
public func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { buf in
        var off = 0
        while off < buf.count {
            let n = write(2, buf.baseAddress! + off, buf.count - off)
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
            off += n
        }
    }
}

/// A flag to stop a running pipeline from any thread (Ctrl-C, `q`, `--frames`).
public final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    public init() {}
    /// True once ``set()`` was called.
    public var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets the flag (idempotent).
    public func set() { value.store(true, ordering: .releasing) }
}
