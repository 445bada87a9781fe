import CSRT

/// One libsrt socket in live mode (`SRTT_LIVE`: messages of at most 1316 bytes, 7 TS packets,
/// delivered at their send time plus the latency), non-blocking, with its own epoll set so that
/// every wait has a timeout. Used from one thread at a time (a feed's, or the sender's).
package final class SRTSocket {
    /// The libsrt handle.
    let handle: SRTSOCKET
    private let epoll: Int32
    private var closed = false
    /// A listener's copy of the one stream id it takes (``SRTURL/streamID``), freed on close.
    private var acceptedID: UnsafeMutablePointer<CChar>?
    /// Largest message in live mode, bytes (`SRT_LIVE_DEF_PLSIZE`: 7 × 188).
    package static let liveMessageBytes = 1316

    private static var lastError: String { SRTLibrary.lastError }

    /// A new live-mode socket with the URL's latency and passphrase.
    /// - Throws: ``SourceError/open(_:)`` when libsrt cannot start or refuses an option.
    package init(_ url: SRTURL) throws {
        guard SRTLibrary.started else { throw SourceError.open("\(url): libsrt did not start: \(Self.lastError)") }
        handle = srt_create_socket()
        guard handle != SRT_INVALID_SOCK else { throw SourceError.open("\(url): \(Self.lastError)") }
        epoll = srt_epoll_create()
        var ok = spy_srt_set_int(handle, SRTO_TRANSTYPE, Int32(SRTT_LIVE.rawValue)) != SRT_ERROR
        ok = ok && spy_srt_set_bool(handle, SRTO_RCVSYN, false) != SRT_ERROR
        ok = ok && spy_srt_set_bool(handle, SRTO_SNDSYN, false) != SRT_ERROR
        ok = ok && spy_srt_set_int(handle, SRTO_LATENCY, Int32(url.latencyMillis)) != SRT_ERROR
        if let secret = url.passphrase { ok = ok && spy_srt_set_string(handle, SRTO_PASSPHRASE, secret) != SRT_ERROR }
        if let n = url.keyLength { ok = ok && spy_srt_set_int(handle, SRTO_PBKEYLEN, Int32(n)) != SRT_ERROR }
        if let id = url.streamID {
            if url.mode == .caller {
                ok = ok && spy_srt_set_string(handle, SRTO_STREAMID, id) != SRT_ERROR
            } else {
                acceptedID = spy_srt_accept_only(handle, id)
                ok = ok && acceptedID != nil
            }
        }
        guard ok, epoll >= 0 else {
            let text = Self.lastError
            close()
            throw SourceError.open("\(url): \(text)")
        }
    }

    /// A socket a listener accepted (options inherited from the listener).
    private init(accepted: SRTSOCKET) {
        handle = accepted
        epoll = srt_epoll_create()
    }

    deinit { close() }

    /// Starts connecting to the first address of HOST:PORT; ``wait(_:timeoutMicros:)`` for
    /// `SRT_EPOLL_OUT` (connected) or `SRT_EPOLL_ERR` (refused: ``rejectReason``).
    /// - Throws: ``SourceError/open(_:)`` when the host does not resolve or libsrt refuses at once.
    package func startConnecting(host: String, port: UInt16, label: String) throws {
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Socket.datagram, passive: false)
        guard let (_, addr) = addrs.first else { throw SourceError.open("\(label): no address") }
        let rc = addr.withUnsafeBytes { srt_connect(handle, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), Int32($0.count)) }
        guard rc != SRT_ERROR else { throw SourceError.open("\(label): \(Self.lastError)") }
        watch(Int32(SRT_EPOLL_OUT.rawValue | SRT_EPOLL_ERR.rawValue))
    }

    /// Binds to [HOST]:PORT and listens for callers (backlog 1: one sender at a time).
    /// - Throws: ``SourceError/open(_:)`` ("…: port 9000 already in use").
    package func listen(host: String?, port: UInt16, label: String) throws {
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Socket.datagram, passive: true)
        guard let (_, addr) = addrs.first else { throw SourceError.open("\(label): no address") }
        let rc = addr.withUnsafeBytes { srt_bind(handle, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), Int32($0.count)) }
        guard rc != SRT_ERROR else {
            let inUse = srt_getlasterror(nil) == SRT_EDUPLISTEN.rawValue || Self.lastError.contains("in use")
            throw SourceError.open("\(label): " + (inUse ? "port \(port) already in use" : Self.lastError))
        }
        guard srt_listen(handle, 1) != SRT_ERROR else { throw SourceError.open("\(label): \(Self.lastError)") }
        watch(Int32(SRT_EPOLL_IN.rawValue | SRT_EPOLL_ERR.rawValue))
    }

    /// The local UDP port (useful when 0 was asked for), or 0.
    var localPort: UInt16 {
        var ss = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &ss) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_getsockname(handle, $0, &len) }
        }
        guard rc != SRT_ERROR else { return 0 }
        return withUnsafePointer(to: &ss) { p in
            p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    private func watch(_ events: Int32) {
        var e = events
        _ = srt_epoll_add_usock(epoll, handle, &e)
    }

    /// Waits up to `timeoutMicros` (rounded up to whole ms: libsrt's unit) for the events asked
    /// for when connecting, listening or receiving. Returns the `SRT_EPOLL_*` bits ready (0: none).
    package func wait(timeoutMicros: Int) -> Int32 {
        spy_srt_wait(epoll, handle, Int64((max(0, timeoutMicros) + 999) / 1000))
    }

    /// The next caller of a listening socket, watched for input, or nil.
    package func accept() -> (SRTSocket, String)? {
        var ss = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        let s = withUnsafeMutablePointer(to: &ss) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_accept(handle, $0, &len) }
        }
        guard s != SRT_INVALID_SOCK else { return nil }
        let peer = withUnsafePointer(to: &ss) { SocketAddress.describe(UnsafeRawPointer($0), length: socklen_t(len)) }
        let accepted = SRTSocket(accepted: s)
        accepted.watchInput()
        return (accepted, peer)
    }

    /// From now on ``wait(timeoutMicros:)`` waits for input (after a connection is made).
    func watchInput() {
        _ = srt_epoll_remove_usock(epoll, handle)
        watch(Int32(SRT_EPOLL_IN.rawValue | SRT_EPOLL_ERR.rawValue))
    }

    /// Reads one message into `buffer`.
    /// - Returns: its length; 0 when nothing is there yet; nil when the connection is broken.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let n = srt_recvmsg(handle, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(min(buffer.count, Int(Int32.max))))
        if n >= 0 { return Int(n) }
        return srt_getlasterror(nil) == SRT_EASYNCRCV.rawValue ? 0 : nil
    }

    /// Sends one message of at most ``liveMessageBytes``.
    /// - Returns: false when it did not go out (buffer full, connection broken).
    package func send(_ message: UnsafeRawBufferPointer) -> Bool {
        srt_sendmsg2(handle, message.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(message.count), nil) != SRT_ERROR
    }

    /// The socket's state (`SRTS_CONNECTED`, `SRTS_BROKEN` …).
    package var state: SRT_SOCKSTATUS { srt_getsockstate(handle) }

    /// Why a connection attempt failed, in libsrt's words, with the rule's name for the
    /// passphrase cases (`SRT_REJ_BADSECRET`: the secrets differ; `SRT_REJ_UNSECURE`: one end
    /// has none) and for no answer at all (`SRT_REJ_TIMEOUT`, after libsrt's 3 s).
    package var rejectReason: String {
        let r = srt_getrejectreason(handle)
        let text = String(cString: srt_rejectreason_str(r))
        switch UInt32(r) {
        case SRT_REJ_BADSECRET.rawValue: return "wrong passphrase (SRT_REJ_BADSECRET: \(text))"
        case SRT_REJ_UNSECURE.rawValue: return "passphrase mismatch: one end has none (SRT_REJ_UNSECURE: \(text))"
        case SRT_REJ_TIMEOUT.rawValue: return "no SRT listener answered (SRT_REJ_TIMEOUT: \(text))"
        default:
            // 1000 and up: the server's own access control (srt/access_control.h), usually
            // about the stream id: 1403 forbidden, 1404 not found …
            guard r >= SRT_REJC_PREDEFINED else { return text }
            return "the server refused the call: \(Self.accessControlText(Int(r)))"
        }
    }

    /// An access-control reject code as a line (srt/access_control.h; HTTP's codes + 1000).
    static func accessControlText(_ code: Int) -> String {
        let names = [1400: "bad request (SRT_REJX_BAD_REQUEST)", 1401: "unauthorized (SRT_REJX_UNAUTHORIZED)",
                     1402: "overloaded (SRT_REJX_OVERLOAD)", 1403: "forbidden (SRT_REJX_FORBIDDEN: a wrong or missing stream id?)",
                     1404: "not found (SRT_REJX_NOTFOUND: no stream by that id)", 1405: "bad mode (SRT_REJX_BAD_MODE)",
                     1406: "unacceptable (SRT_REJX_UNACCEPTABLE)", 1409: "conflict (SRT_REJX_CONFLICT)"]
        return "\(code) " + (names[code] ?? (code >= 2000 ? "the application's own code" : "a server error"))
    }

    /// The stream id this socket carries: on a socket a listener accepted, the caller's (nil:
    /// none).
    package var streamID: String? {
        var buffer = [CChar](repeating: 0, count: 513)
        guard spy_srt_get_streamid(handle, &buffer) > 0 else { return nil }
        return String(cString: buffer)
    }

    /// Closes the sockets of one SRT end (a connection, a call in progress, a listener) and
    /// forgets them. Safe to call twice.
    package static func close(_ stream: inout SRTSocket?, _ connecting: inout SRTSocket?, _ listener: inout SRTSocket?) {
        for s in [stream, connecting, listener] { s?.close() }
        (stream, connecting, listener) = (nil, nil, nil)
    }

    /// True when the peer refused for a reason a new call cannot mend: the passphrases differ
    /// (`SRT_REJ_BADSECRET`), only one end has one (`SRT_REJ_UNSECURE`), or the server's access
    /// control refused us (1000 and up: a stream id it does not take).
    package var refusedForGood: Bool {
        let r = srt_getrejectreason(handle)
        return UInt32(r) == SRT_REJ_BADSECRET.rawValue || UInt32(r) == SRT_REJ_UNSECURE.rawValue || r >= SRT_REJC_PREDEFINED
    }

    /// The link statistics since the connection opened (`srt_bistats`, totals).
    package var statistics: SRTStatistics? {
        var s = SRT_TRACEBSTATS()
        guard srt_bistats(handle, &s, 0, 1) != SRT_ERROR else { return nil }
        return SRTStatistics(s)
    }

    /// Closes the socket and its epoll set. Safe to call twice.
    package func close() {
        guard !closed else { return }
        closed = true
        _ = srt_epoll_release(epoll)
        _ = srt_close(handle)
        free(acceptedID)
        acceptedID = nil
    }
}
