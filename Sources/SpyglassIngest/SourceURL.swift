import SpyglassTransport
/// Where the bytes come from: the `SOURCE` argument of `spyglass play`.
///
/// | form | meaning |
/// |---|---|
/// | `udp://[ADDR]:PORT` | bind and receive; ADDR defaults to all interfaces |
/// | `udp://GROUP:PORT[?iface=NAME\|ADDR]` | join a multicast group (224.0.0.0/4, ff00::/8) |
/// | `tcp://HOST:PORT` | connect to a sender |
/// | `tcp://[ADDR]:PORT?listen` | accept a sender that connects to us |
/// | `rtsp://[USER:PASS@]HOST[:PORT]/PATH[?QUERY]` | an RTSP camera or server (RFC 2326) |
/// | `rtsps://…[?insecure]` | the same over TLS (RFC 7826 §19.2), interleaved; `insecure` accepts any certificate |
/// | `srt://[HOST]:PORT[?mode=…&latency=MS&passphrase=…]` | SRT carrying MPEG-TS (see ``SRTURL``) |
/// | a path | read the file |
/// | `-` | standard input |
/// | any of them `?program=N` or `?pid=N` | the MPEG-TS program or video PID to play (``MPEGTSSelection``) |
public enum SourceURL: Equatable, Sendable, CustomStringConvertible {
    case udp(host: String?, port: UInt16, interface: String? = nil)
    case tcpConnect(host: String, port: UInt16)
    case tcpListen(host: String?, port: UInt16)
    case file(path: String)
    case stdin
    case rtsp(RTSPURL)
    /// A udp://, tcp:// or file source with `?program=N` / `?pid=N` for its MPEG-TS.
    indirect case selecting(SourceURL, MPEGTSSelection)
    case srt(SRTURL)

    /// Errors for a SOURCE that cannot be understood.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case unknownScheme(String)
        case badAddress(String)
        /// `udp://5600`: a port without its ':'; carries the text and the likely meaning.
        case portWithoutColon(String, meant: String)
        /// `udp:/5600`, `udp:5600`: a scheme without its `//`; carries the text and the likely meaning.
        case missingSlashes(String, meant: String)
        /// A query item the scheme does not know (`udp://:5600?ifcae=eth0`), with the ones it does.
        case unknownOption(String, scheme: String, known: [String])
        public var description: String {
            switch self {
            case .unknownOption(let item, let scheme, let known):
                let hint = Suggestion.didYouMean(String(item.prefix { $0 != "=" }), among: known + ["program", "pid"])
                return "unknown \(scheme):// option '\(item)'\(hint); \(scheme):// takes " + (known + ["program", "pid"]).map { "?\($0)" }.joined(separator: ", ")
            case .missingSlashes(_, let meant): return "not a URL: a scheme needs '://' (did you mean \(meant)?)"
            case .unknownScheme(let s): return "unknown URL scheme '\(s)' (use udp://, tcp://, rtsp://, srt://, a file path or -)"
            case .badAddress(let s): return "bad address '\(s)' (expected HOST:PORT with PORT 1-65535)"
            case .portWithoutColon(let s, let meant): return "bad address '\(s)': a port needs its ':' (did you mean \(meant)?)"
            }
        }
    }

    /// Parses a SOURCE argument. Throws ``ParseError`` or ``MPEGTSSelection/ParseError``.
    public init(parsing text: String) throws {
        if text == "-" { self = .stdin; return }
        // `?program=`/`?pid=` choose within MPEG-TS, an RTSP server's MP2T track too; no other
        // query item is touched (a camera's own query goes to it as it is).
        if case let (rest, selection?) = try MPEGTSSelection.split(text) {
            var inner = try SourceURL(parsing: rest)
            if case .rtsp(var u) = inner { u.selectsWithinMPEGTS = true; inner = .rtsp(u) }
            self = .selecting(inner, selection)
            return
        }
        guard let schemeEnd = text.range(of: "://") else {
            if let meant = Self.withSlashes(text) { throw ParseError.missingSlashes(text, meant: meant) }
            self = .file(path: text); return
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        // The camera's own URL passes through untouched (its query is the camera's).
        if scheme == "rtsp" || scheme == "rtsps" { self = .rtsp(try RTSPURL(parsing: text)); return }
        if scheme == "srt" { self = .srt(try SRTURL(parsing: text)); return }
        var rest = String(text[schemeEnd.upperBound...])
        var query = ""
        if let q = rest.firstIndex(of: "?") { query = String(rest[rest.index(after: q)...]); rest = String(rest[..<q]) }
        if rest.hasSuffix("/") { rest.removeLast() }
        guard ["udp", "tcp", "file"].contains(scheme) else { throw ParseError.unknownScheme(scheme) }
        if scheme == "file" { self = .file(path: rest); return }
        let (host, port) = try Self.hostPort(rest, original: text)
        let known = scheme == "udp" ? ["iface"] : ["listen"]
        if let unknown = query.split(separator: "&").first(where: { !known.contains(String($0.prefix { $0 != "=" })) }) {
            throw ParseError.unknownOption(String(unknown), scheme: scheme, known: known)
        }
        let listen = query.split(separator: "&").contains { $0 == "listen" || $0 == "listen=1" }
        switch scheme {
        case "udp":
            var iface: String?
            for item in query.split(separator: "&") where item.hasPrefix("iface=") { iface = String(item.dropFirst(6)) }
            self = .udp(host: host, port: port, interface: iface)
        case "tcp":
            if listen { self = .tcpListen(host: host, port: port) }
            else {
                guard let host else { throw ParseError.badAddress(text) }
                self = .tcpConnect(host: host, port: port)
            }
        case "file": self = .file(path: rest)
        default: throw ParseError.unknownScheme(scheme)
        }
    }

    /// `udp:/5600` → `udp://:5600`, `tcp:host:1` → `tcp://host:1`: a known scheme followed by ':'
    /// but not '://'. Nil for anything else (a file path).
    static func withSlashes(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":"),
              ["udp", "tcp", "rtsp", "rtsps", "srt", "file"].contains(text[..<colon].lowercased()) else { return nil }
        let rest = text[text.index(after: colon)...].drop { $0 == "/" }
        let hostless = rest.first?.isNumber == true && !rest.contains(":") && !rest.contains(".")
        return "\(text[..<colon])://\(hostless ? ":" : "")\(rest)"
    }

    static func hostPort(_ s: String, original: String) throws -> (String?, UInt16) {
        // [v6]:port, host:port, :port
        var host: Substring
        var portText: Substring
        if s.hasPrefix("[") , let close = s.firstIndex(of: "]") {
            host = s[s.index(after: s.startIndex)..<close]
            let after = s[s.index(after: close)...]
            guard after.hasPrefix(":") else { throw ParseError.badAddress(original) }
            portText = after.dropFirst()
        } else if let colon = s.lastIndex(of: ":") {
            host = s[..<colon]
            portText = s[s.index(after: colon)...]
        } else {
            if let p = UInt16(s), p > 0, let scheme = original.range(of: "://") {
                throw ParseError.portWithoutColon(original, meant: String(original[..<scheme.upperBound]) + ":" + original[scheme.upperBound...])
            }
            throw ParseError.badAddress(original)
        }
        guard let port = UInt16(portText), port > 0 else { throw ParseError.badAddress(original) }
        return (host.isEmpty ? nil : String(host), port)
    }

    /// True for sources that deliver in real time (sockets), as opposed to files and stdin.
    public var deliversInRealTime: Bool {
        switch self {
        case .udp, .tcpConnect, .tcpListen, .rtsp, .srt: return true
        case .file, .stdin: return false
        case .selecting(let inner, _): return inner.deliversInRealTime
        }
    }

    /// True for a file (a recording, a packet capture): what it holds was captured in the past,
    /// so its capture stamps say how old it is, not how far the sender's clock is from ours.
    public var isFile: Bool {
        switch self {
        case .file: return true
        case .selecting(let inner, _): return inner.isFile
        default: return false
        }
    }

    /// The MPEG-TS program or PID the URL selects (nil: none).
    public var mpegtsSelection: MPEGTSSelection? {
        if case .selecting(_, let s) = self { return s }
        return nil
    }

    /// The URL without its MPEG-TS selection: what is opened.
    public var transport: SourceURL {
        if case .selecting(let inner, _) = self { return inner }
        return self
    }

    /// True for `srt://`.
    public var isSRT: Bool { if case .srt = self { return true } else { return false } }

    public var description: String {
        switch self {
        case .udp(let h, let p, let i): return "udp://\(h.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""):\(p)" + (i.map { "?iface=\($0)" } ?? "")
        case .tcpConnect(let h, let p): return "tcp://\(h.contains(":") ? "[\(h)]" : h):\(p)"
        case .tcpListen(let h, let p): return "tcp://\(h ?? ""):\(p)?listen"
        case .file(let path): return path
        case .stdin: return "stdin"
        case .rtsp(let u): return u.requestURL
        case .selecting(let inner, let s):
            let text = inner.description
            return text + (text.contains("?") ? "&" : "?") + s.query
        case .srt(let u): return u.description
        }
    }
}
