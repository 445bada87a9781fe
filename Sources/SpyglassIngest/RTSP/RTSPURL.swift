/// An `rtsp://[user:pass@]host[:port]/path[?query]` URL (RFC 2326 §3.2).
///
/// The camera's own URL passes through untouched (query included, as Dahua's
/// `…/realmonitor?channel=1&subtype=0` needs); only the credentials are taken out of it.
public struct RTSPURL: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    /// Default 554 (RFC 2326 §3.2).
    public var port: UInt16
    public var user: String?
    public var password: String?
    /// The URL as sent in requests: no credentials.
    public var requestURL: String

    /// - Throws: ``SourceURL/ParseError/badAddress(_:)`` for a URL with no host or a bad port.
    public init(parsing text: String) throws {
        guard let schemeEnd = text.range(of: "://") else { throw SourceURL.ParseError.badAddress(text) }
        var rest = String(text[schemeEnd.upperBound...])
        var authority = rest
        var tail = ""
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
            authority = String(rest[..<slash])
            tail = String(rest[slash...])
        }
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
        port = 554
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
        requestURL = "rtsp://\(hostPart)\(port == 554 && !text.contains(":554") ? "" : ":\(port)")\(tail)"
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
