#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpyglassPipeline

/// One RTSP response (RFC 2326 §7).
package struct RTSPResponse {
    var status = 0
    var reason = ""
    /// Header values by lower-case name (a repeated header keeps every value).
    var headers: [String: [String]] = [:]
    var body = ""
    func header(_ name: String) -> String? { headers[name.lowercased()]?.first }
}

/// The RTSP control connection (RFC 2326 over TCP, or over TLS for `rtsps://`): requests with
/// CSeq, Session and Authorization; responses; and, with TCP transport, the interleaved RTP/RTCP
/// frames (`$`, channel, 16-bit length; §10.12) that share the connection.
package final class RTSPControl {
    private(set) var fd: Int32
    private let addresses: [(Int32, [UInt8])]
    private let label: String
    private let host: String
    private let security: RTSPURL.Security
    /// The TLS session over `fd` (`rtsps://`).
    private var tls: TLSSession?
    private var buffer: [UInt8] = []
    private var cseq = 0
    var session: String?
    private var auth: RTSPAuth?
    private let user: String?
    private let password: String?
    /// Frames that arrived while a response was awaited.
    private var frames: [(channel: UInt8, payload: [UInt8])] = []
    /// Longest wait for a response, µs.
    static let responseTimeoutMicros = 5_000_000

    /// Connects to the server, and for `rtsps://` completes the TLS handshake.
    /// - Parameters:
    ///   - security: plain TCP, or TLS with the certificate checked or not (`?insecure`).
    /// - Throws: ``SourceError/open(_:)``: the connection refused, or TLS failed (named by
    ///   cause, ``TLSSession``).
    init(host: String, port: UInt16, user: String?, password: String?, security: RTSPURL.Security = .none) throws {
        self.user = user
        self.password = password
        self.host = host
        self.security = security
        addresses = try SocketAddress.resolve(host: host, port: port, socketType: Socket.stream, passive: false)
        label = "\(security == .none ? "rtsp" : "rtsps")://\(host):\(port)"
        fd = try Self.connect(addresses, label)
        try startTLS()
    }

    private func startTLS() throws {
        guard case .tls(let check) = security else { return }
        do { tls = try TLSSession(fd: fd, host: host, insecure: !check, label: label) } catch {
            Glibc.close(fd)
            fd = -1
            throw error
        }
    }

    private static func connect(_ addresses: [(Int32, [UInt8])], _ label: String) throws -> Int32 {
        switch Socket.connect(addresses) {
        case .success(let s):
            Socket.setOption(s, Int32(IPPROTO_TCP), TCP_NODELAY, Int32(1))
            return s
        case .failure(let f): throw SourceError.open("\(label): cannot connect: \(f.text)")
        }
    }

    deinit {
        tls?.shutdown()
        tls = nil
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Writes all of `bytes` to the server (through TLS for `rtsps://`).
    /// - Returns: whether all were written.
    func write(_ bytes: [UInt8]) -> Bool {
        if let tls { return tls.write(bytes) == bytes.count }
        return writeAll(fd, bytes, sendFlags: Int32(MSG_NOSIGNAL)) == bytes.count
    }

    /// Decrypted bytes wait in the TLS session: no need to wait on the socket.
    var hasBuffered: Bool { tls?.hasBuffered ?? false }

    /// Waits up to `timeoutMicros` for something to read (true at once when TLS holds some).
    private func waitForData(timeoutMicros: Int) -> Bool {
        hasBuffered || waitReadable(fd, timeoutMicros: timeoutMicros)
    }

    /// Sends a request and returns its response; answers one 401 with the credentials.
    /// - Throws: ``SourceError/open(_:)`` on a closed connection, a timeout, or a 401 with no or
    ///   wrong credentials (naming the server's realm).
    func request(_ method: String, _ url: String, headers: [(String, String)] = []) throws -> RTSPResponse {
        var r = try send(method, url, headers)
        if r.status == 401 {
            guard let a = RTSPAuth(challenges: r.headers["www-authenticate"] ?? []) else {
                throw SourceError.open("\(url): 401 Unauthorized, with no challenge Spyglass can answer")
            }
            guard user != nil, password != nil else {
                throw SourceError.open("\(url): the server asks for a user and password (realm \"\(a.realm)\"): give them as rtsp://USER:PASS@…")
            }
            auth = a
            // Some servers close the connection after a 401 (as HTTP servers may): ask again on a
            // new one. No session exists before SETUP, so nothing is lost.
            if session == nil {
                tls = nil
                Glibc.close(fd)
                buffer.removeAll()
                fd = try Self.connect(addresses, label)
                try startTLS()
            }
            r = try send(method, url, headers)
            if r.status == 401 {
                throw SourceError.open("\(url): wrong user or password for realm \"\(a.realm)\" (401 Unauthorized)")
            }
        }
        return r
    }

    private func send(_ method: String, _ url: String, _ headers: [(String, String)]) throws -> RTSPResponse {
        cseq += 1
        var text = "\(method) \(url) RTSP/1.0\r\nCSeq: \(cseq)\r\nUser-Agent: Spyglass\r\n"
        if let session { text += "Session: \(session)\r\n" }
        if auth != nil, let user, let password { text += "Authorization: \(auth!.authorization(method: method, uri: url, user: user, password: password))\r\n" }
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        text += "\r\n"
        guard write(Array(text.utf8)) else {
            throw SourceError.open("\(url): the server closed the connection (sending \(method))")
        }
        let deadline = MonotonicClock.nowMicros() + UInt64(Self.responseTimeoutMicros)
        while true {
            if let r = try next() {
                if case .response(let resp) = r { return resp }
                if case .frame(let c, let p) = r { frames.append((c, p)); if frames.count > 512 { frames.removeFirst() } }
                continue
            }
            let now = MonotonicClock.nowMicros()
            guard now < deadline else { throw SourceError.open("\(url): no answer to \(method) in \(Self.responseTimeoutMicros / 1_000_000) s") }
            guard waitForData(timeoutMicros: Int(deadline - now)) else { continue }
            guard fill() else {
                // A server that speaks only TLS (rtsps://) drops a plain request unanswered.
                let hint = cseq == 1 && security == .none ? "; if it wants TLS, try rtsps://" : ""
                throw SourceError.open("\(url): the server closed the connection (before answering \(method))\(hint)")
            }
        }
    }

    /// Sends a request without waiting for its answer (keep-alive, teardown).
    func post(_ method: String, _ url: String) {
        cseq += 1
        var text = "\(method) \(url) RTSP/1.0\r\nCSeq: \(cseq)\r\nUser-Agent: Spyglass\r\n"
        if let session { text += "Session: \(session)\r\n" }
        if auth != nil, let user, let password { text += "Authorization: \(auth!.authorization(method: method, uri: url, user: user, password: password))\r\n" }
        text += "\r\n"
        _ = write(Array(text.utf8))
    }

    enum Item { case response(RTSPResponse), frame(channel: UInt8, payload: [UInt8]) }

    /// The next interleaved frame (responses to keep-alives are read and dropped), waiting up to
    /// `timeoutMicros`. - Returns: nil on timeout. - Throws: when the server closed the connection.
    func readFrame(timeoutMicros: Int) throws -> (channel: UInt8, payload: [UInt8])? {
        if !frames.isEmpty { return frames.removeFirst() }
        let deadline = MonotonicClock.nowMicros() + UInt64(max(0, timeoutMicros))
        while true {
            while let item = try next() {
                if case .frame(let c, let p) = item { return (c, p) }
            }
            let now = MonotonicClock.nowMicros()
            guard now < deadline, waitForData(timeoutMicros: Int(deadline - now)) else { return nil }
            guard fill() else { throw SourceError.read("the RTSP server closed the connection") }
        }
    }

    /// Reads what is there (over TLS, possibly nothing yet: a record not yet whole). False on
    /// end of stream or error.
    func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n: Int
        if let tls {
            switch chunk.withUnsafeMutableBytes({ tls.read(into: $0) }) {
            case .bytes(let count): n = count
            case .nothing: return true
            case .closed: return false
            }
        } else {
            n = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
        }
        // Acknowledge at once (Linux clears quick-ACK mode by itself, so after every read): a
        // server that writes interleaved RTP with Nagle on (GStreamer's) otherwise holds each
        // small write until our delayed ACK, 40 ms: RTSP over TCP then took 21–29 ms glass to
        // glass at p50 instead of 5 (`bench --transport rtsp --rtsp-transport tcp`).
        Socket.setOption(fd, Int32(IPPROTO_TCP), TCP_QUICKACK, Int32(1))
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Takes one complete message or frame from the buffer, if there is one.
    private func next() throws -> Item? {
        guard let first = buffer.first else { return nil }
        if first == 0x24 {
            guard buffer.count >= 4 else { return nil }
            let length = Int(buffer[2]) << 8 | Int(buffer[3])
            guard buffer.count >= 4 + length else { return nil }
            let item = Item.frame(channel: buffer[1], payload: Array(buffer[4..<(4 + length)]))
            buffer.removeFirst(4 + length)
            return item
        }
        guard let end = headerEnd() else {
            if buffer.count > 64 << 10 { throw SourceError.read("the RTSP server sent a header of over 64 KiB") }
            return nil
        }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        var r = RTSPResponse()
        var lines = head.components(separatedBy: "\r\n")
        let status = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard status.count >= 2, status[0].hasPrefix("RTSP/"), let code = Int(status[1]) else {
            let first = head.prefix { $0 != "\r" && $0 != "\n" }
            throw SourceError.read("not an RTSP response: \(first.prefix(60))")
        }
        r.status = code
        r.reason = status.count > 2 ? String(status[2]) : ""
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            r.headers[line[..<colon].lowercased(), default: []].append(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = Int(r.header("content-length") ?? "0") ?? 0
        guard length >= 0, length <= 1 << 20 else { throw SourceError.read("RTSP Content-Length \(length) refused") }
        guard buffer.count >= end + 4 + length else { return nil }
        r.body = String(decoding: buffer[(end + 4)..<(end + 4 + length)], as: UTF8.self)
        buffer.removeFirst(end + 4 + length)
        return .response(r)
    }

    private func headerEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i }
        return nil
    }
}
