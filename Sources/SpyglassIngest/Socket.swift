#if canImport(Glibc)
import Glibc
#endif

/// Resolves HOST:PORT with `getaddrinfo` into socket addresses.
package enum SocketAddress {
    /// - Parameters:
    ///   - host: name or literal; nil means "any" (for bind) with `passive`.
    ///   - port: port number.
    ///   - socketType: `SOCK_DGRAM` or `SOCK_STREAM` raw value.
    ///   - passive: resolve for bind.
    /// - Returns: `(family, sockaddr bytes)` of each result, in resolver order.
    /// - Throws: ``SourceError/open(_:)`` with the resolver's message.
    package static func resolve(host: String?, port: UInt16, socketType: Int32, passive: Bool) throws -> [(Int32, [UInt8])] {
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
        let hostText = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let servText = serv.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return "\(hostText):\(servText)"
    }
}

/// The socket calls the UDP/TCP sources and the sender share: open, set an option, bind (and
/// listen), connect, read back the local port, name a multicast interface.
///
/// Every socket is opened close-on-exec. A failure comes back as the `errno` of the last failed
/// call (``Failure``), so that each caller words its message as it always did.
package enum Socket {
    /// `SOCK_DGRAM`, as the `Int32` that `socket(2)` and ``SocketAddress/resolve(host:port:socketType:passive:)`` take.
    package static let datagram = Int32(SOCK_DGRAM.rawValue)
    /// `SOCK_STREAM`, as the `Int32` that `socket(2)` and ``SocketAddress/resolve(host:port:socketType:passive:)`` take.
    package static let stream = Int32(SOCK_STREAM.rawValue)

    /// Why no socket could be bound or connected to any of the resolved addresses.
    package struct Failure: Error {
        /// `errno` of the last failed call; 0 when there was no address to try.
        let code: Int32

        /// `strerror(code)`, or "no address".
        package var text: String { code == 0 ? "no address" : errnoText(code) }

        /// As ``text``, but EADDRINUSE reads "port `port` already in use" (the bind message of the sources).
        func bindText(port: UInt16) -> String {
            code == EADDRINUSE ? "port \(port) already in use" : text
        }
    }

    /// `socket(2)` with `SOCK_CLOEXEC`.
    /// - Parameters:
    ///   - family: `AF_INET` or `AF_INET6`.
    ///   - type: ``datagram`` or ``stream``.
    /// - Returns: the descriptor, or -1 with `errno` set.
    package static func open(family: Int32, type: Int32) -> Int32 {
        socket(family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// `setsockopt(2)` with a value of any plain type (`Int32`, `UInt8`, `ip_mreqn` …); the
    /// option length is the value's size.
    /// - Returns: true when the kernel took the option.
    @discardableResult
    package static func setOption<Value>(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Value) -> Bool {
        withUnsafeBytes(of: value) { setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count)) == 0 }
    }

    /// Opens a socket on the first of `addresses` that binds it (and, with `listenBacklog`,
    /// listens on it); each address that fails is closed again.
    /// - Parameters:
    ///   - addresses: `(family, sockaddr bytes)` from ``SocketAddress/resolve(host:port:socketType:passive:)``.
    ///   - type: ``datagram`` or ``stream``.
    ///   - reuseAddress: set `SO_REUSEADDR` before binding.
    ///   - listenBacklog: `listen(2)` backlog; nil = do not listen (UDP).
    /// - Returns: the bound descriptor, or the ``Failure`` of the last address.
    package static func bind(_ addresses: [(Int32, [UInt8])], type: Int32, reuseAddress: Bool,
                     listenBacklog: Int32? = nil) -> Result<Int32, Failure> {
        var failure = Failure(code: 0)
        for (family, address) in addresses {
            let s = open(family: family, type: type)
            guard s >= 0 else { failure = Failure(code: errno); continue }
            if reuseAddress { setOption(s, SOL_SOCKET, SO_REUSEADDR, Int32(1)) }
            let rc = address.withUnsafeBytes {
                Glibc.bind(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
            }
            if rc == 0 && (listenBacklog.map { listen(s, $0) } ?? 0) == 0 { return .success(s) }
            failure = Failure(code: errno)
            Glibc.close(s)
        }
        return .failure(failure)
    }

    /// Opens a socket and connects it to the first of `addresses` that accepts (blocking
    /// `connect(2)`); each address that fails is closed again.
    /// - Parameters:
    ///   - addresses: `(family, sockaddr bytes)` from ``SocketAddress/resolve(host:port:socketType:passive:)``.
    ///   - type: ``stream`` (the default) or ``datagram``.
    /// - Returns: the connected descriptor, or the ``Failure`` of the last address.
    package static func connect(_ addresses: [(Int32, [UInt8])], type: Int32 = Socket.stream) -> Result<Int32, Failure> {
        var failure = Failure(code: 0)
        for (family, address) in addresses {
            let s = open(family: family, type: type)
            guard s >= 0 else { failure = Failure(code: errno); continue }
            let rc = address.withUnsafeBytes {
                Glibc.connect(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
            }
            if rc == 0 { return .success(s) }
            failure = Failure(code: errno)
            Glibc.close(s)
        }
        return .failure(failure)
    }

    /// Binds an open socket of `family` (AF_INET or AF_INET6) to `port` on every local address.
    /// - Returns: false when the port is taken (or the socket is already bound).
    package static func bindLocal(_ fd: Int32, family: Int32, port: UInt16) -> Bool {
        guard let (_, address) = (try? SocketAddress.resolve(host: family == AF_INET6 ? "::" : "0.0.0.0", port: port,
                                                             socketType: datagram, passive: true))?.first else { return false }
        return address.withUnsafeBytes {
            Glibc.bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
        } == 0
    }

    /// The local port of a bound IPv4 or IPv6 socket (`getsockname(2)`); useful when port 0
    /// was asked for. Nil when it cannot be read.
    static func localPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { p -> UInt16? in
            let family = p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Int32? in
                getsockname(fd, sa, &length) == 0 ? Int32(sa.pointee.sa_family) : nil
            }
            switch family {
            case AF_INET:
                return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            case AF_INET6:
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            default:
                return nil
            }
        }
    }

    /// The interface named by `?iface=` for IPv4 multicast: an IPv4 address (index 0), or an
    /// interface name (`if_nametoindex(3)`, address 0.0.0.0).
    /// - Returns: nil when it is neither an IPv4 address nor the name of an interface.
    package static func multicastInterface(_ text: String) -> (address: in_addr, index: UInt32)? {
        if let a = AddressPrefix(text), a.bytes.count == 4 {
            return (a.bytes.withUnsafeBytes { $0.load(as: in_addr.self) }, 0)
        }
        let index = if_nametoindex(text)
        return index == 0 ? nil : (in_addr(s_addr: 0), index)
    }
}
