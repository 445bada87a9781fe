#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Sends Annex B access units to `udp://HOST:PORT` (cut into datagrams of at most `mtu`
/// bytes, as real senders do) or over TCP (`tcp://HOST:PORT` connects,
/// `tcp://[ADDR]:PORT?listen` waits for one receiver).
///
/// When a TCP receiver goes away, the stream goes on: a client reconnects (one attempt per
/// ``waitForReceiver(timeoutMicros:)``, so every 100 ms from ``LiveSender``), a listener accepts
/// the next receiver. Each loss is logged once.
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
    /// TCP client: the addresses to reconnect to.
    private var connectAddresses: [(family: Int32, address: [UInt8])] = []
    private var lost = false

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
            connectAddresses = addrs.map { (family: $0.0, address: $0.1) }
            if let error = connectOnce() { lastError = error }
            guard fd >= 0 else { throw SourceError.open("\(label): \(lastError)") }
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

    /// TCP client: one connection attempt to each address. Returns nil when connected, else the error.
    private func connectOnce() -> String? {
        var lastError = "no address"
        for (family, addr) in connectAddresses {
            let s = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard s >= 0 else { lastError = errnoText(); continue }
            let rc = addr.withUnsafeBytes { connect(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
            if rc == 0 {
                var one: Int32 = 1
                setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                fd = s
                return nil
            }
            lastError = errnoText()
            Glibc.close(s)
        }
        return lastError
    }

    /// Makes sure there is a receiver, waiting at most about `timeoutMicros`: UDP always has
    /// one; `?listen` accepts the next receiver; a TCP client whose receiver went away tries to
    /// connect again once, and sleeps out the timeout when that fails.
    /// - Returns: true when a send can go out now.
    public func waitForReceiver(timeoutMicros: Int) -> Bool {
        if fd >= 0 { return true }
        if !connectAddresses.isEmpty {
            if connectOnce() == nil {
                Log.info("\(label): connected again")
                lost = false
                return true
            }
            usleep(UInt32(max(1_000, min(timeoutMicros, 1_000_000))))
            return false
        }
        guard listenFD >= 0 else { return false }
        guard spy_wait_readable(listenFD, timeoutMicros) > 0 else { return false }
        let s = spy_accept_cloexec(listenFD, nil, nil)
        guard s >= 0 else { return false }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        fd = s
        lost = false
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
                    if rc <= 0 {
                        sendErrors += 1
                        Glibc.close(fd)
                        fd = -1
                        if !lost {
                            Log.info("\(label): the receiver closed the connection; \(listenFD >= 0 ? "waiting for the next one" : "reconnecting")")
                            lost = true
                        }
                        return
                    }
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
