#if canImport(Glibc)
import Glibc
#endif
import CSRT
import Synchronization
import SpyglassPipeline

/// libsrt's process-wide set-up: `srt_startup` once before any other call, and its log.
///
/// libsrt logs to stderr on its own threads, in its own format. Spyglass keeps its one-line
/// messages: libsrt's log goes through ``forward(_:)``, which says only what the user must
/// know and libsrt tells no API caller: that a listener refused a caller, and why ("Incorrect
/// passphrase"). Everything else libsrt logs is dropped; its errors reach us as return codes.
package enum SRTLibrary {
    /// True once libsrt is started (the first use starts it).
    static let started: Bool = {
        srt_setloglevel(LOG_WARNING)
        srt_setlogflags(SRT_LOGF_DISABLE_TIME | SRT_LOGF_DISABLE_THREADNAME | SRT_LOGF_DISABLE_SEVERITY | SRT_LOGF_DISABLE_EOL)
        srt_setloghandler(nil) { _, _, _, _, _, message in
            if let message, let line = SRTLibrary.forward(String(cString: message)) { Log.info(line) }
        }
        return srt_startup() >= 0
    }()

    /// The line to show for one libsrt log message, or nil to drop it.
    /// - Parameter message: libsrt's text, e.g. "processConnectRequest: rsp(REJECT): 1010 - Incorrect passphrase".
    /// A caller that keeps trying gets its refusal said once, then at most once every 10 s.
    static func forward(_ message: String) -> String? {
        guard let r = message.range(of: "rsp(REJECT): ") else { return nil }
        let line = "srt: a caller was refused: \(message[r.upperBound...])"
        let now = MonotonicClock.nowMicros()
        let due = lastSaid.withLock { said -> Bool in
            if let at = said[line], now - at < 10_000_000 { return false }
            if said.count > 64 { said.removeAll() }
            said[line] = now
            return true
        }
        return due ? line : nil
    }

    /// When each refusal line was last said, monotonic µs.
    private static let lastSaid = Mutex<[String: UInt64]>([:])

    /// libsrt's text for the last error on this thread.
    static var lastError: String { String(cString: srt_getlasterror_str()) }
}
