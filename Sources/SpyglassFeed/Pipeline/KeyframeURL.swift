import CCurl
import CSystem
import Foundation
import Synchronization
import SpyglassIngest
import SpyglassPipeline
import SpyglassTransport

/// `--keyframe-url URL`: asks the camera for an IDR with an HTTP GET whenever an RTCP PLI would
/// have been sent (OpenIPC's majestic answers `GET /request/idr`). For links with no way back
/// for RTCP (raw Annex B over UDP, MPEG-TS, one-way radio links such as wfb-ng), where damage is
/// seen as a cut unit, a concealed picture or a join before any keyframe; over RTP it follows the
/// RTCP session's requests.
///
/// The feed's thread decides when, with ``KeyframeRequester``'s timing (at once, then every
/// 200 ms while the damage lasts, at most 5 a second), and never waits: the GET runs on a thread
/// of its own through libcurl (2 s timeout; Basic or Digest credentials in the URL), one at a
/// time; a request due while one is running is not doubled. A failure is logged once per kind.
public final class KeyframeURL: Sendable {
    /// The URL asked.
    public let url: String
    private let condition = NSCondition()
    private let wanted = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// GETs made, and those answered with a 2xx status.
    private let counts = Mutex((asked: 0, answered: 0))
    private let label: String

    /// Starts the asking thread.
    /// - Parameters:
    ///   - url: `http://` or `https://` (libcurl), credentials allowed.
    ///   - label: the feed's name, for the log.
    public init(url: String, label: String) {
        self.url = url
        self.label = label
        _ = Self.globalInit
        let t = Thread { [self] in work() }
        t.stackSize = 1 << 20
        t.start()
    }

    /// Whether `url` can be asked: `http://` or `https://` with a host (libcurl is held to
    /// those two). The reason when not.
    public static func problem(with url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return "'\(shown(url))' is not an http:// or https:// URL" }
        let rest = url[url.range(of: "://")!.upperBound...]
        guard let host = rest.split(separator: "/", omittingEmptySubsequences: false).first, !host.isEmpty, !host.hasSuffix("@") else {
            return "'\(shown(url))' names no host"
        }
        guard url.count <= 2048 else { return "the URL is longer than 2048 characters" }
        guard !url.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else { return "the URL has spaces or control characters" }
        return nil
    }

    /// The URL as it may be printed: credentials replaced by `…`, at most 120 characters.
    public static func shown(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
           !text[scheme.upperBound..<at].contains("/") {
            text.replaceSubrange(scheme.upperBound..<at, with: "…")
        }
        return text.count > 120 ? String(text.prefix(119)) + "…" : text
    }

    /// `curl_global_init`, once per process, before any thread uses libcurl.
    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// Asks for one GET as soon as the thread is free. Never blocks on the network.
    public func ask() {
        condition.lock()
        wanted.store(true, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread after the GET in flight, and the one asked for, if any.
    public func stop() {
        condition.lock()
        stopped.store(true, ordering: .releasing)
        condition.signal()
        condition.unlock()
    }

    /// GETs made so far, and those the camera answered with a 2xx status.
    public var made: (asked: Int, answered: Int) { counts.withLock { $0 } }

    private func work() {
        _ = spy_name_this_thread("keyframe url")
        var logged = Set<String>()
        while true {
            condition.lock()
            while !wanted.load(ordering: .acquiring) && !stopped.load(ordering: .acquiring) { condition.wait() }
            condition.unlock()
            // A GET asked for before the stop is still made (a short feed's only one).
            guard wanted.exchange(false, ordering: .acquiringAndReleasing) else { return }
            var status = 0
            let rc = spy_curl_get(url, 2_000, &status)
            // A body past 64 KiB ends the transfer (CURLE_WRITE_ERROR) after the status came.
            let ok = (rc == CURLE_OK || rc == CURLE_WRITE_ERROR) && (200..<300).contains(status)
            counts.withLock { $0.asked += 1; if ok { $0.answered += 1 } }
            let why = ok ? nil : status > 0 ? "HTTP \(status)" : String(cString: curl_easy_strerror(rc))
            if let why, logged.count < 4, logged.insert(why).inserted {
                Log.info("\(label): --keyframe-url \(Self.shown(url)): \(why) (said once)")
            }
        }
    }
}

/// When the feed asks ``KeyframeURL``: on the feed's thread, a value.
///
/// Over RTP (`rtp` true) the RTCP session says when: each keyframe request it makes. Otherwise
/// the feed's own damage and joins do.
struct KeyframeURLRequests {
    let asker: KeyframeURL
    private var timing = KeyframeRequester()

    init(asker: KeyframeURL) { self.asker = asker }

    /// The RTCP session made a keyframe request.
    func rtcpAsked() { asker.ask() }

    /// The picture was damaged, or a join waits for a keyframe (ignored over RTP).
    mutating func damaged(_ reason: KeyframeRequester.Reason, nowMicros: UInt64, rtp: Bool) {
        if !rtp { timing.request(reason, nowMicros: nowMicros) }
    }

    /// A clean random-access picture was decoded: stop asking.
    mutating func clean(nowMicros: UInt64) { _ = timing.randomAccessArrived(nowMicros: nowMicros) }

    /// Asks when due (never over RTP); returns why, to be counted.
    mutating func tick(nowMicros: UInt64, rtp: Bool) -> KeyframeRequester.Reason? {
        guard !rtp, let reason = timing.pendingReason,
              timing.pliIfDue(senderSSRC: 0, mediaSSRC: 0, nowMicros: nowMicros) != nil else { return nil }
        asker.ask()
        return reason
    }
}
