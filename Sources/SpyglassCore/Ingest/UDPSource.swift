#if canImport(Glibc)
import Glibc
#endif

/// Receives datagrams on a bound UDP socket.
///
/// Each datagram is read whole (the buffer holds 65,535 bytes, the IPv4 maximum); one that is
/// still cut (MSG_TRUNC) is counted and reported as truncated. Zero-length datagrams are
/// counted and never passed on. The socket asks for a large receive buffer so that a keyframe
/// burst is not dropped by the kernel while a frame decodes.
public final class UDPSource: ByteSource {
    public let label: String
    public let isLive = true
    public var deliversDatagrams: Bool { true }
    public private(set) var counters = SourceCounters()
    /// Receive buffer the kernel granted, bytes (as `getsockopt(SO_RCVBUF)` reports it).
    public let grantedReceiveBufferBytes: Int
    /// The local port actually bound (useful when port 0 was asked for).
    public let boundPort: UInt16
    private var fd: Int32

    /// Largest UDP payload over IPv4/IPv6 without jumbograms, bytes.
    public static let maxDatagramBytes = 65_535

    /// Bytes read per datagram; a longer datagram is cut and counted.
    public let readBufferBytes: Int

    /// Binds `host:port` (host nil = all interfaces).
    /// - Parameters:
    ///   - receiveBufferBytes: kernel receive buffer to ask for (default 8 MiB).
    ///   - readBufferBytes: bytes read per datagram (default 65,535: every UDP datagram whole).
    /// - Throws: ``SourceError/open(_:)``, e.g. "udp://:5600: port already in use".
    public init(host: String?, port: UInt16, receiveBufferBytes: Int = 8 << 20,
                readBufferBytes: Int = UDPSource.maxDatagramBytes, label: String? = nil) throws {
        self.readBufferBytes = max(1, min(readBufferBytes, UDPSource.maxDatagramBytes))
        let label = label ?? SourceURL.udp(host: host, port: port).description
        self.label = label
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Int32(SOCK_DGRAM.rawValue), passive: true)
        var lastError = "no address"
        var bound: Int32 = -1
        for (family, addr) in addrs {
            let s = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard s >= 0 else { lastError = errnoText(); continue }
            let rc = addr.withUnsafeBytes { bind(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
            if rc == 0 { bound = s; break }
            lastError = errno == EADDRINUSE ? "port \(port) already in use" : errnoText()
            Glibc.close(s)
        }
        guard bound >= 0 else { throw SourceError.open("\(label): \(lastError)") }
        fd = bound
        let fd = bound
        // SO_RCVBUFFORCE passes the rmem_max cap when we are root; SO_RCVBUF otherwise.
        var want = Int32(receiveBufferBytes)
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, socklen_t(MemoryLayout<Int32>.size))
        }
        var got: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len)
        grantedReceiveBufferBytes = Int(got)
        var ss = sockaddr_storage()
        var sl = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var port = port
        withUnsafeMutablePointer(to: &ss) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                if getsockname(fd, sa, &sl) == 0 {
                    if Int32(sa.pointee.sa_family) == AF_INET {
                        p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { port = UInt16(bigEndian: $0.pointee.sin_port) }
                    } else if Int32(sa.pointee.sa_family) == AF_INET6 {
                        p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { port = UInt16(bigEndian: $0.pointee.sin6_port) }
                    }
                }
            }
        }
        boundPort = port
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard fd >= 0 else { return .end }
        if !waitReadable(fd, timeoutMicros: timeoutMicros) { return .timeout }
        // MSG_TRUNC makes recv return the datagram's real length, so a cut is visible.
        let room = min(buffer.count, readBufferBytes)
        let n = recv(fd, buffer.baseAddress, room, Int32(MSG_TRUNC | MSG_DONTWAIT))
        let now = MonotonicClock.nowMicros()
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return .timeout }
            throw SourceError.read("\(label): recv failed: \(errnoText())")
        }
        if n == 0 {
            counters.emptyDatagrams += 1
            return .emptyDatagram
        }
        let truncated = n > room
        let count = min(n, room)
        counters.datagrams += 1
        counters.bytes += count
        if truncated { counters.truncatedDatagrams += 1 }
        return .data(count: count, arrivalMicros: now, truncated: truncated)
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}
