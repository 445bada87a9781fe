#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Sends Annex B access units to `udp://HOST:PORT` (cut into datagrams of at most `mtu`
/// bytes, as real senders do) or over TCP (`tcp://HOST:PORT` connects,
/// `tcp://[ADDR]:PORT?listen` waits for one receiver).
public final class StreamSender {
    private var fd: Int32 = -1
    private var listenFD: Int32 = -1
    private var address: [UInt8] = []
    private let isUDP: Bool
    /// Largest UDP payload sent, bytes.
    public let mtu: Int
    /// Datagrams (or TCP writes) and bytes sent.
    public private(set) var datagramsSent = 0
    public private(set) var bytesSent = 0
    /// Sends that failed (receiver gone, buffer full); the stream goes on.
    public private(set) var sendErrors = 0
    public let label: String

    /// - Parameters:
    ///   - destination: where to send (a ``SourceURL`` of kind udp/tcp).
    ///   - mtu: UDP payload cap, bytes (default 1400).
    /// - Throws: ``SourceError/open(_:)`` when the address cannot be resolved, connected or bound.
    public init(destination: SourceURL, mtu: Int = 1400) throws {
        self.mtu = max(16, min(mtu, UDPSource.maxDatagramBytes))
        label = destination.description
        switch destination {
        case .udp(let host, let port, let iface):
            isUDP = true
            let addrs = try SocketAddress.resolve(host: host ?? "127.0.0.1", port: port, socketType: Int32(SOCK_DGRAM.rawValue), passive: false)
            guard let (family, addr) = addrs.first else { throw SourceError.open("\(label): no address") }
            fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw SourceError.open("\(label): \(errnoText())") }
            var buf: Int32 = 4 << 20
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, socklen_t(MemoryLayout<Int32>.size))
            address = addr
            if let group = host.flatMap({ AddressPrefix($0) }), group.bytes.count == 4, group.bytes[0] & 0xF0 == 0xE0 {
                // Multicast: one hop by default; `?iface=ADDR` picks the outgoing interface.
                var ttl: UInt8 = 1
                setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &ttl, 1)
                if let iface {
                    // `?iface=` as an address or an interface name, as for the receiver.
                    var m = ip_mreqn()
                    if let a = AddressPrefix(iface), a.bytes.count == 4 {
                        m.imr_address = a.bytes.withUnsafeBytes { $0.load(as: in_addr.self) }
                    } else {
                        m.imr_ifindex = Int32(if_nametoindex(iface))
                        guard m.imr_ifindex != 0 else { throw SourceError.open("\(label): no interface '\(iface)'") }
                    }
                    setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &m, socklen_t(MemoryLayout<ip_mreqn>.size))
                }
            }
        case .tcpConnect(let host, let port):
            isUDP = false
            let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Int32(SOCK_STREAM.rawValue), passive: false)
            var lastError = "no address"
            for (family, addr) in addrs {
                let s = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                let rc = addr.withUnsafeBytes { connect(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
                if rc == 0 { fd = s; break }
                lastError = errnoText()
                Glibc.close(s)
            }
            guard fd >= 0 else { throw SourceError.open("\(label): \(lastError)") }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        case .tcpListen(let host, let port):
            isUDP = false
            let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Int32(SOCK_STREAM.rawValue), passive: true)
            for (family, addr) in addrs {
                let s = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                var one: Int32 = 1
                setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
                let rc = addr.withUnsafeBytes { bind(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
                if rc == 0 && listen(s, 1) == 0 { listenFD = s; break }
                Glibc.close(s)
            }
            guard listenFD >= 0 else { throw SourceError.open("\(label): cannot listen: \(errnoText())") }
        case .file, .stdin:
            throw SourceError.open("\(label): send needs udp:// or tcp://")
        }
    }

    deinit { close() }

    /// For `?listen`: waits up to `timeoutMicros` for a receiver. Returns true once connected.
    public func acceptIfListening(timeoutMicros: Int) -> Bool {
        guard listenFD >= 0 else { return fd >= 0 }
        if fd >= 0 { return true }
        guard spy_wait_readable(listenFD, timeoutMicros) > 0 else { return false }
        let s = spy_accept_cloexec(listenFD, nil, nil)
        guard s >= 0 else { return false }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        fd = s
        return true
    }

    /// Sends each element as one datagram as is (RTP packets).
    public func sendDatagrams(_ datagrams: [[UInt8]]) {
        guard fd >= 0, isUDP else { return }
        for d in datagrams {
            let rc = d.withUnsafeBytes { raw in
                address.withUnsafeBytes { a in
                    sendto(fd, raw.baseAddress!, raw.count, 0, a.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
                }
            }
            if rc < 0 { sendErrors += 1 } else { datagramsSent += 1; bytesSent += d.count }
        }
    }

    /// True for a UDP destination.
    public var isDatagram: Bool { isUDP }

    /// Sends one access unit (Annex B bytes).
    public func send(_ bytes: [UInt8]) {
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { raw in
            if isUDP {
                var off = 0
                while off < raw.count {
                    let n = min(mtu, raw.count - off)
                    let rc = address.withUnsafeBytes { a in
                        sendto(fd, raw.baseAddress! + off, n, 0, a.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(address.count))
                    }
                    if rc < 0 { sendErrors += 1 } else { datagramsSent += 1; bytesSent += n }
                    off += n
                }
            } else {
                var off = 0
                while off < raw.count {
                    let rc = Glibc.send(fd, raw.baseAddress! + off, raw.count - off, Int32(MSG_NOSIGNAL))
                    if rc <= 0 { sendErrors += 1; Glibc.close(fd); fd = -1; return }
                    off += rc
                    bytesSent += rc
                }
                datagramsSent += 1   // one write
            }
        }
    }

    /// Closes the sockets.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        if listenFD >= 0 { Glibc.close(listenFD) }
        fd = -1
        listenFD = -1
    }
}
