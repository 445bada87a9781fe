/// An `srt://[HOST]:PORT[?mode=caller|listener&latency=MS&passphrase=SECRET]` URL, as SRT
/// tools write them (srt-live-transmit, OBS, GStreamer's `srtsrc uri=`; ffmpeg's own differ in
/// taking latency in µs).
///
/// - `mode`: `caller` connects to HOST:PORT, `listener` waits on [HOST]:PORT for a caller.
///   Default: caller when a host is given, listener for `srt://:PORT`.
/// - `latency`: SRT's receive latency (TSBPD delay), ms, 0...60000; default 20 (a LAN). Both
///   ends propose one and the larger wins (SRT handshake, `SRTO_RCVLATENCY`/`SRTO_PEERLATENCY`).
/// - `passphrase`: AES key-exchange secret, 10 to 79 characters (libsrt's `SRTO_PASSPHRASE`
///   rule), percent-decoded; both ends must agree.
/// - `streamid`: `SRTO_STREAMID`, percent-decoded, at most 512 bytes: a caller sends it, and
///   servers (MediaMTX `read:cam1`, SRS `#!::r=live/cam1,m=request`) route or refuse by it; a
///   listener takes only callers that send exactly it.
/// - `pbkeylen`: the AES key length, bytes (`SRTO_PBKEYLEN`: 16, 24 or 32; default libsrt's).
public struct SRTURL: Equatable, Sendable, CustomStringConvertible {
    /// Who opens the connection.
    public enum Mode: String, Sendable { case caller, listener }

    /// The peer to call, or the local address to listen on (nil: every interface).
    public var host: String?
    /// The UDP port called or listened on.
    public var port: UInt16
    /// Caller or listener.
    public var mode: Mode
    /// Receive latency, ms.
    public var latencyMillis: Int
    /// The AES passphrase, or nil for an unencrypted stream.
    public var passphrase: String?
    /// The stream id sent as a caller, or the only one taken as a listener (nil: none).
    public var streamID: String?
    /// The AES key length, bytes (16, 24, 32), or nil for libsrt's default.
    public var keyLength: Int?

    /// Default receive latency, ms: enough for a retransmission on a LAN, no more.
    public static let defaultLatencyMillis = 20

    /// Errors for an `srt://` URL that cannot be used; the description is one line.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case badParameter(String)
        public var description: String {
            switch self { case .badParameter(let s): return s }
        }
    }

    /// An SRT endpoint from its parts (port 0 lets a listener take any free port).
    public init(host: String?, port: UInt16, mode: Mode, latencyMillis: Int = Self.defaultLatencyMillis, passphrase: String? = nil) {
        self.host = host
        self.port = port
        self.mode = mode
        self.latencyMillis = latencyMillis
        self.passphrase = passphrase
    }

    /// Parses an `srt://` URL.
    /// - Throws: ``SourceURL/ParseError/badAddress(_:)`` for a bad HOST:PORT;
    ///   ``ParseError/badParameter(_:)`` for an unknown parameter, a latency out of range, a
    ///   passphrase of the wrong length, or a caller with no host.
    public init(parsing given: String) throws {
        try self.init(parsing: given, shown: Self.redacting(given))
    }

    /// A URL as it may be printed: every `passphrase=` value replaced by `…` (in any URL: a
    /// secret never reaches a log, a title or an error line).
    public static func redacting(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let r = rest.range(of: "passphrase=") {
            out += rest[..<r.upperBound] + "…"
            rest = rest[r.upperBound...]
            rest = rest.firstIndex(of: "&").map { rest[$0...] } ?? ""
        }
        return out + rest
    }

    /// Parses `text`, naming it as `shown` (passphrase redacted) in errors.
    private init(parsing text: String, shown: String) throws {
        guard let schemeEnd = text.range(of: "://") else { throw SourceURL.ParseError.badAddress(shown) }
        var rest = String(text[schemeEnd.upperBound...])
        var query = ""
        if let q = rest.firstIndex(of: "?") { query = String(rest[rest.index(after: q)...]); rest = String(rest[..<q]) }
        if rest.hasSuffix("/") { rest.removeLast() }
        (host, port) = try SourceURL.hostPort(rest, original: shown)
        mode = host == nil ? .listener : .caller
        latencyMillis = Self.defaultLatencyMillis
        for item in query.split(separator: "&") {
            let kv = item.split(separator: "=", maxSplits: 1)
            try apply(key: String(kv[0]), value: kv.count > 1 ? String(kv[1]) : "", url: shown)
        }
        if mode == .caller && host == nil { throw ParseError.badParameter("\(shown): a caller needs a host (srt://HOST:PORT)") }
    }

    private mutating func apply(key: String, value: String, url: String) throws {
        switch key {
        case "mode":
            guard let m = Mode(rawValue: value) else { throw ParseError.badParameter("\(url): mode '\(value)' (use caller or listener)") }
            mode = m
        case "latency":
            guard let ms = Int(value), (0...60_000).contains(ms) else { throw ParseError.badParameter("\(url): latency '\(value)' (use 0 to 60000 ms)") }
            latencyMillis = ms
        case "passphrase":
            let secret = value.removingPercentEncodingIfPossible
            guard (10...79).contains(secret.count) else { throw ParseError.badParameter("\(url): the passphrase must be 10 to 79 characters") }
            passphrase = secret
        case "streamid":
            let id = value.removingPercentEncodingIfPossible
            guard !id.isEmpty, id.utf8.count <= 512, !id.utf8.contains(0) else { throw ParseError.badParameter("\(url): the stream id must be 1 to 512 bytes") }
            streamID = id
        case "pbkeylen":
            guard let n = Int(value), [16, 24, 32].contains(n) else { throw ParseError.badParameter("\(url): pbkeylen '\(value)' (use 16, 24 or 32)") }
            keyLength = n
        default:
            throw ParseError.badParameter("\(url): unknown parameter '\(key)' (use mode, latency, passphrase, streamid, pbkeylen)")
        }
    }

    /// The URL without the passphrase (for logs and the window title).
    public var description: String {
        let h = host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""
        let implied: Mode = host == nil ? .listener : .caller
        var params: [String] = []
        if mode != implied { params.append("mode=\(mode.rawValue)") }
        if latencyMillis != Self.defaultLatencyMillis { params.append("latency=\(latencyMillis)") }
        if passphrase != nil { params.append("passphrase=…") }
        if let streamID { params.append("streamid=\(streamID)") }
        if let keyLength { params.append("pbkeylen=\(keyLength)") }
        return "srt://\(h):\(port)" + (params.isEmpty ? "" : "?" + params.joined(separator: "&"))
    }
}
