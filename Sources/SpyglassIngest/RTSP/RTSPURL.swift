/// An `rtsp://[user:pass@]host[:port]/path[?query]` URL (RFC 2326 §3.2), or `rtsps://…` for
/// RTSP over TLS (RFC 7826 §19.2; UniFi Protect and other cameras).
///
/// The camera's own URL passes through untouched (query included, as Dahua's
/// `…/realmonitor?channel=1&subtype=0` needs); only the credentials, and Spyglass's own query
/// items `insecure` and `track=` (and `program=`/`pid=`, ``SourceURL``), are taken out of it.
public struct RTSPURL: Equatable, Sendable, CustomStringConvertible {
    /// How the control connection is carried.
    public enum Security: Equatable, Sendable {
        /// Plain TCP (`rtsp://`).
        case none
        /// TLS (`rtsps://`); the server's certificate checked against the system's trust store
        /// and the host, unless the URL has `?insecure` (a camera's self-signed certificate).
        case tls(checkCertificate: Bool)
    }

    public var host: String
    /// Default 554 (RFC 2326 §3.2), 322 for `rtsps://` (RFC 7826 §19.2).
    public var port: UInt16
    /// Plain or TLS.
    public var security: Security
    /// `?track=`: the track to play, by its 1-based place among the SDP's media sections or by
    /// its `a=control` value (nil: the H.264/H.265 video track, else an MPEG-TS one).
    public var track: String?
    /// The URL had `?program=`/`?pid=` (``SourceURL``): they choose within MPEG-TS, so the
    /// server's MP2T track is the one to play.
    public var selectsWithinMPEGTS = false
    public var user: String?
    public var password: String?
    /// The URL as sent in requests: no credentials.
    public var requestURL: String

    /// - Throws: ``SourceURL/ParseError/badAddress(_:)`` for a URL with no host or a bad port.
    public init(parsing text: String) throws {
        guard let schemeEnd = text.range(of: "://") else { throw SourceURL.ParseError.badAddress(text) }
        let secure = text[..<schemeEnd.lowerBound].lowercased() == "rtsps"
        var rest = String(text[schemeEnd.upperBound...])
        var authority = rest
        var tail = ""
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
            authority = String(rest[..<slash])
            tail = String(rest[slash...])
        }
        let (request, insecure, track) = Self.takeOwnItems(tail)
        tail = request
        self.track = track
        security = secure ? .tls(checkCertificate: !insecure) : .none
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = String(authority[authority.index(after: at)...])
            if let colon = credentials.firstIndex(of: ":") {
                user = Self.unescape(String(credentials[..<colon]))
                password = Self.unescape(String(credentials[credentials.index(after: colon)...]))
            } else {
                user = Self.unescape(String(credentials))
            }
        }
        rest = authority
        let defaultPort: UInt16 = secure ? 322 : 554
        port = defaultPort
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw SourceURL.ParseError.badAddress(text) }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { guard let p = UInt16(after.dropFirst()), p > 0 else { throw SourceURL.ParseError.badAddress(text) }; port = p }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            guard let p = UInt16(rest[rest.index(after: colon)...]), p > 0 else { throw SourceURL.ParseError.badAddress(text) }
            port = p
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw SourceURL.ParseError.badAddress(text) }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        requestURL = "\(secure ? "rtsps" : "rtsp")://\(hostPart)\(port == defaultPort && !text.contains(":\(defaultPort)") ? "" : ":\(port)")\(tail)"
    }

    /// The path and query without Spyglass's own query items: whether there was an `insecure`
    /// (`insecure`, `insecure=1` or `insecure=true`), and a `track=` value.
    private static func takeOwnItems(_ tail: String) -> (String, insecure: Bool, track: String?) {
        guard let q = tail.firstIndex(of: "?") else { return (tail, false, nil) }
        let items = tail[tail.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false)
        let insecure = items.contains { ["insecure", "insecure=1", "insecure=true"].contains($0.lowercased()) }
        let track = items.last { $0.hasPrefix("track=") }.map { String($0.dropFirst(6)).removingPercentEncodingIfPossible }
        let kept = items.filter { !["insecure", "insecure=1", "insecure=true"].contains($0.lowercased()) && !$0.hasPrefix("track=") }
        guard kept.count < items.count else { return (tail, false, nil) }
        let path = String(tail[..<q])
        return (kept.isEmpty ? path : path + "?" + kept.joined(separator: "&"), insecure, track)
    }

    public var description: String { requestURL }

    private static func unescape(_ s: String) -> String { s.removingPercentEncodingIfPossible }
}

extension String {
    /// `%XX` escapes decoded (user names and passwords in URLs); unchanged when invalid.
    var removingPercentEncodingIfPossible: String {
        var out: [UInt8] = []
        var bytes = Array(utf8)[...]
        while let b = bytes.first {
            bytes = bytes.dropFirst()
            if b == UInt8(ascii: "%"), bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
