#if canImport(Glibc)
import Glibc
#endif

/// Resolves HOST:PORT with `getaddrinfo` into socket addresses.
enum SocketAddress {
    /// - Parameters:
    ///   - host: name or literal; nil means "any" (for bind) with `passive`.
    ///   - port: port number.
    ///   - socketType: `SOCK_DGRAM` or `SOCK_STREAM` raw value.
    ///   - passive: resolve for bind.
    /// - Returns: `(family, sockaddr bytes)` of each result, in resolver order.
    /// - Throws: ``SourceError/open(_:)`` with the resolver's message.
    static func resolve(host: String?, port: UInt16, socketType: Int32, passive: Bool) throws -> [(Int32, [UInt8])] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = socketType
        hints.ai_flags = passive ? AI_PASSIVE : 0
        if host == nil { hints.ai_family = AF_INET }
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw SourceError.open("cannot resolve \(host ?? "*"):\(port): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        var out: [(Int32, [UInt8])] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let a = p {
            let bytes = UnsafeRawBufferPointer(start: a.pointee.ai_addr, count: Int(a.pointee.ai_addrlen))
            out.append((a.pointee.ai_family, Array(bytes)))
            p = a.pointee.ai_next
        }
        return out
    }

    /// The peer/local address of a sockaddr as "host:port".
    static func describe(_ storage: UnsafeRawPointer, length: socklen_t) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var serv = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let rc = getnameinfo(storage.assumingMemoryBound(to: sockaddr.self), length, &host, socklen_t(host.count),
                             &serv, socklen_t(serv.count), NI_NUMERICHOST | NI_NUMERICSERV)
        guard rc == 0 else { return "?" }
        return "\(String(cString: host)):\(String(cString: serv))"
    }
}
