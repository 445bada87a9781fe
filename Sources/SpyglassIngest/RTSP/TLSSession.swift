#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import SpyglassPipeline

/// TLS on a connected TCP socket, through OpenSSL (libssl 3): the RTSP control connection of an
/// `rtsps://` URL (RFC 7826 §19.2; port 322 by default), and the interleaved RTP and RTCP that
/// ride inside it.
///
/// The server's certificate is checked against the system's trust store (OpenSSL's default
/// paths; `SSL_CERT_FILE`/`SSL_CERT_DIR` override them) and against the host name or IP address
/// of the URL (RFC 6125), unless `insecure` (the URL's `?insecure`: a camera's self-signed
/// certificate) is set. TLS 1.2 at least (RFC 8996). The socket is made non-blocking: a
/// read never waits for the rest of a record that a stalled server holds back.
package final class TLSSession {
    private let ssl: OpaquePointer
    private let context: OpaquePointer
    let fd: Int32

    /// Performs the handshake on `fd` (connected, blocking or not) within `timeoutMicros`.
    /// - Parameters:
    ///   - fd: the connected TCP socket; the session reads and writes it from now on (it does
    ///     not close it).
    ///   - host: the URL's host: sent as SNI when it is a name, and checked against the
    ///     certificate's subject alternative names (DNS or IP).
    ///   - insecure: accept any certificate (self-signed, expired, other name).
    ///   - label: the URL for messages.
    /// - Throws: ``SourceError/open(_:)`` naming the cause: the certificate's problem by
    ///   OpenSSL's verify code ("self-signed", "expired", "for another host name", "issuer not
    ///   trusted", …) with a hint to `?insecure`, or the protocol error (a server that does not
    ///   speak TLS on that port, no common version, a handshake cut off, a timeout).
    package init(fd: Int32, host: String, insecure: Bool, label: String, timeoutMicros: Int = 5_000_000) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw SourceError.open("\(label): TLS: \(Self.errorText())") }
        _ = spy_ssl_ctx_min_tls12(context)
        if !insecure {
            SSL_CTX_set_default_verify_paths(context)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw SourceError.open("\(label): TLS: \(Self.errorText())")
        }
        self.ssl = ssl
        self.context = context
        self.fd = fd
        spy_ssl_set_modes(ssl)
        let isAddress = Self.isIPAddress(host)
        if !isAddress { _ = spy_ssl_set_sni(ssl, host) }
        if !insecure {
            let param = SSL_get0_param(ssl)
            if isAddress { X509_VERIFY_PARAM_set1_ip_asc(param, host) } else { X509_VERIFY_PARAM_set1_host(param, host, 0) }
        }
        SSL_set_fd(ssl, fd)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        try handshake(label: label, insecure: insecure, timeoutMicros: timeoutMicros)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    private func handshake(label: String, insecure: Bool, timeoutMicros: Int) throws {
        let deadline = MonotonicClock.nowMicros() + UInt64(timeoutMicros)
        while true {
            ERR_clear_error()
            let rc = SSL_connect(ssl)
            if rc == 1 { return }
            let e = SSL_get_error(ssl, rc)
            let now = MonotonicClock.nowMicros()
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE), now < deadline {
                var p = pollfd(fd: fd, events: Int16(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
                _ = poll(&p, 1, Int32((deadline - now + 999) / 1000))
                continue
            }
            if e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE {
                throw SourceError.open("\(label): TLS: no handshake in \(timeoutMicros / 1_000_000) s (is the server speaking TLS on that port?)")
            }
            let verify = SSL_get_verify_result(ssl)
            if !insecure, verify != X509_V_OK {
                throw SourceError.open("\(label): TLS: the server's certificate \(Self.certificateProblem(Int32(verify))) "
                                       + "(OpenSSL: \(String(cString: X509_verify_cert_error_string(verify)))); "
                                       + "add ?insecure to the URL to accept it anyway")
            }
            let why = Self.errorText(fallback: e == SSL_ERROR_SYSCALL ? "the server closed the connection" : "SSL error \(e)")
            // A plain RTSP server answers the ClientHello in text: OpenSSL reads its first bytes as a record version.
            let hint = why.contains("wrong version number") ? " (the server does not speak TLS on this port: try rtsp://)" : ""
            throw SourceError.open("\(label): TLS handshake failed: \(why)\(hint)")
        }
    }

    /// The certificate problem in words, from OpenSSL's verify code (x509_vfy.h).
    static func certificateProblem(_ code: Int32) -> String {
        switch code {
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: return "is self-signed"
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: return "chains to a self-signed root that is not trusted"
        case X509_V_ERR_CERT_HAS_EXPIRED: return "has expired"
        case X509_V_ERR_CERT_NOT_YET_VALID: return "is not valid yet (check the clocks)"
        case X509_V_ERR_HOSTNAME_MISMATCH: return "is for another host name"
        case X509_V_ERR_IP_ADDRESS_MISMATCH: return "is for another IP address"
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
            return "is signed by an issuer that is not trusted here (SSL_CERT_FILE=CA.pem trusts a site's own CA)"
        case X509_V_ERR_CERT_REVOKED: return "is revoked"
        default: return "is refused"
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// OpenSSL's error queue as text ("wrong version number", "unsupported protocol", …).
    private static func errorText(fallback: String = "unknown error") -> String {
        var parts: [String] = []
        while case let e = ERR_get_error(), e != 0 {
            if let reason = ERR_reason_error_string(e) { parts.append(String(cString: reason)) }
        }
        return parts.isEmpty ? fallback : parts.joined(separator: ", ")
    }

    /// Decrypted bytes already read from the socket and not yet taken: poll on the socket would
    /// not see them.
    var hasBuffered: Bool { SSL_pending(ssl) > 0 }

    /// What a read found.
    enum ReadResult: Equatable {
        /// This many bytes.
        case bytes(Int)
        /// Nothing decrypted yet (a record is incomplete, or the socket had nothing).
        case nothing
        /// The server closed the connection, or TLS failed.
        case closed
    }

    /// Reads decrypted bytes into `buffer` without waiting.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        ERR_clear_error()
        let n = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if n > 0 { return .bytes(Int(n)) }
        let e = SSL_get_error(ssl, n)
        return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? .nothing : .closed
    }

    /// Writes all of `bytes`, waiting for the socket up to `timeoutMicros` in all.
    /// - Returns: the bytes written (fewer: the connection failed or stayed full).
    @discardableResult
    func write(_ bytes: [UInt8], timeoutMicros: Int = 2_000_000) -> Int {
        var done = 0
        let deadline = MonotonicClock.nowMicros() + UInt64(timeoutMicros)
        while done < bytes.count {
            ERR_clear_error()
            let n = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + done, Int32(clamping: bytes.count - done)) }
            if n > 0 { done += Int(n); continue }
            let e = SSL_get_error(ssl, n)
            let now = MonotonicClock.nowMicros()
            guard e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE, now < deadline else { return done }
            var p = pollfd(fd: fd, events: Int16(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
            _ = poll(&p, 1, Int32((deadline - now + 999) / 1000))
        }
        return done
    }

    /// Sends TLS's close_notify (RFC 8446 §6.1) without waiting for the server's.
    func shutdown() { _ = SSL_shutdown(ssl) }
}
