#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// One-line messages to stderr, prefixed with `spyglass:`.
public enum Log {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var quiet = false

    /// Silences ``info(_:)`` (errors still print).
    public static func setQuiet(_ q: Bool) { lock.lock(); quiet = q; lock.unlock() }

    /// An informational line.
    public static func info(_ message: String) {
        lock.lock(); defer { lock.unlock() }
        if quiet { return }
        fputs("spyglass: \(message)\n", stderr)
    }

    /// An error line (always printed).
    public static func error(_ message: String) {
        lock.lock(); defer { lock.unlock() }
        fputs("spyglass: error: \(message)\n", stderr)
    }
}

/// A thread-safe flag to stop a running receiver (Ctrl-C, `q`, `--frames`).
public final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    public init() {}
    public var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    public func set() { lock.lock(); value = true; lock.unlock() }
}
