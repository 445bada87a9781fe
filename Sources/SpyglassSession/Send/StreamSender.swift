#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassIngest

/// Sends Annex B access units to `udp://HOST:PORT` (cut into datagrams of at most `mtu`
/// bytes, as real senders do), over TCP (`tcp://HOST:PORT` connects,
/// `tcp://[ADDR]:PORT?listen` waits for one receiver), or over SRT (`srt://HOST:PORT` calls,
/// `srt://:PORT` listens; messages of 1316 bytes, see ``SRTURL``).
///
/// When a TCP receiver goes away, the stream goes on: a client reconnects (one attempt per
/// ``waitForReceiver(timeoutMicros:)``, so every 100 ms from ``LiveSender``), a listener accepts
/// the next receiver. Each loss is logged once.
public final class StreamSender {
    private var fd: Int32 = -1
    private var listenFD: Int32 = -1
    private var address: [UInt8] = []
    /// UDP: more destinations that get every datagram too (``alsoSend(to:)``), sockaddr bytes.
    private var copies: [[UInt8]] = []
    /// UDP with copies: which destination goes first for the next access unit (they take turns).
    private var firstDestination = 0
    private let isUDP: Bool
    /// Largest UDP payload sent, bytes.
    public let mtu: Int
    /// Datagrams sent (UDP; to each destination), or access units written whole (TCP).
    public private(set) var datagramsSent = 0
    /// Bytes sent, payload only (no IP/UDP/TCP headers); a TCP write cut short counts what went out.
    public private(set) var bytesSent = 0
    /// Sends that failed (receiver gone, buffer full); the stream goes on.
    public private(set) var sendErrors = 0
    /// UDP: the share of datagrams dropped instead of sent (`bench --loss`), from a fixed seed.
    public var loss = 0.0
    /// Datagrams dropped by ``loss``.
    public private(set) var datagramsDropped = 0
    private var lossState: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// The destination as a URL, for logs.
    public let label: String
    /// TCP client: the addresses to reconnect to, `(family, sockaddr bytes)`.
    private var connectAddresses: [(Int32, [UInt8])] = []
    private var lost = false
    private var srt: SRTSendLink?

    /// Opens the destination: a UDP socket, a connected TCP socket (one attempt), or a
    /// listening TCP socket (the receiver is accepted by ``waitForReceiver(timeoutMicros:)``).
    /// - Parameters:
    ///   - destination: where to send (a ``SourceURL`` of kind udp/tcp).
    ///   - mtu: UDP payload cap, bytes (default 1400).
    /// - Throws: ``SourceError/open(_:)`` when the address cannot be resolved, connected or bound.
    public init(destination: SourceURL, mtu: Int = 1400) throws {
        self.mtu = max(16, min(mtu, UDPSource.maxDatagramBytes))
        label = destination.description
        switch destination.transport {
        case .udp(let host, let port, let iface):
            isUDP = true
            let addrs = try SocketAddress.resolve(host: host ?? "127.0.0.1", port: port, socketType: Socket.datagram, passive: false)
            guard let (family, addr) = addrs.first else { throw SourceError.open("\(label): no address") }
            fd = Socket.open(family: family, type: Socket.datagram)
            guard fd >= 0 else { throw SourceError.open("\(label): \(errnoText())") }
            Socket.setOption(fd, SOL_SOCKET, SO_SNDBUF, Int32(4 << 20))
            address = addr
            // IPv4 groups only: an IPv6 group is sent to with the system's defaults.
            if let group = host.flatMap({ AddressPrefix($0) }), group.bytes.count == 4, group.isMulticast {
                // Multicast: one hop by default; `?iface=ADDR` picks the outgoing interface.
                Socket.setOption(fd, Int32(IPPROTO_IP), IP_MULTICAST_TTL, UInt8(1))
                if let iface {
                    // `?iface=` as an address or an interface name, as for the receiver.
                    guard let named = Socket.multicastInterface(iface) else {
                        throw SourceError.open("\(label): no interface '\(iface)'")
                    }
                    var m = ip_mreqn()
                    m.imr_address = named.address
                    m.imr_ifindex = Int32(named.index)
                    Socket.setOption(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, m)
                }
            }
        case .tcpConnect(let host, let port):
            isUDP = false
            connectAddresses = try SocketAddress.resolve(host: host, port: port, socketType: Socket.stream, passive: false)
            if let error = connectOnce() { throw SourceError.open("\(label): \(error)") }
        case .tcpListen(let host, let port):
            isUDP = false
            let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Socket.stream, passive: true)
            switch Socket.bind(addrs, type: Socket.stream, reuseAddress: true, listenBacklog: 1) {
            case .success(let s): listenFD = s
            case .failure(let f): throw SourceError.open("\(label): cannot listen: \(f.text)")
            }
        case .srt(let u):
            isUDP = false
            srt = try SRTSendLink(url: u)
        case .file, .stdin, .rtsp, .selecting:
            throw SourceError.open("\(label): send needs udp://, tcp:// or srt://")
        }
    }

    deinit { close() }

    /// TCP client: one connection attempt to each address. Returns nil when connected, else the error.
    private func connectOnce() -> String? {
        switch Socket.connect(connectAddresses) {
        case .success(let s):
            Socket.setOption(s, Int32(IPPROTO_TCP), TCP_NODELAY, Int32(1))
            fd = s
            return nil
        case .failure(let f):
            return f.text
        }
    }

    /// Why the receiver refused this stream for good, one line: an SRT listener with another
    /// passphrase, or none (libsrt's `SRT_REJ_BADSECRET`, `SRT_REJ_UNSECURE`). Nil while
    /// calling again may still succeed.
    public var refusal: String? { srt?.refusal }

    /// Makes sure there is a receiver, waiting at most about `timeoutMicros`: UDP always has
    /// one; `?listen` accepts the next receiver; a TCP client whose receiver went away tries to
    /// connect again once, and sleeps out the timeout when that fails.
    /// - Returns: true when a send can go out now.
    public func waitForReceiver(timeoutMicros: Int) -> Bool {
        if let srt { return srt.waitForReceiver(timeoutMicros: timeoutMicros) }
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
        Socket.setOption(s, Int32(IPPROTO_TCP), TCP_NODELAY, Int32(1))
        fd = s
        lost = false
        return true
    }

    /// Sends each element as one datagram as is (RTP packets, RFC 3550); UDP only, nothing is
    /// sent over TCP. A failed datagram is counted in ``sendErrors``.
    public func sendDatagrams(_ datagrams: [[UInt8]]) {
        guard fd >= 0, isUDP else { return }
        for d in datagrams {
            if loss > 0 && dropNext() { datagramsDropped += 1; continue }
            d.withUnsafeBytes { sendToEach($0) }
        }
        takeTurns()
    }

    /// Also sends every datagram to `destination` (a second receiver of the same stream, as a
    /// benchmark's players are): each access unit's datagrams go to one destination after the
    /// other, datagram by datagram, and the destinations take turns at going first.
    /// - Throws: ``SourceError/open(_:)`` for a destination that is not UDP, or not of the first
    ///   one's address family, or that cannot be resolved, or that is given twice, or that names an interface
    ///   (`?iface=`: the first destination's socket sends them all).
    public func alsoSend(to destination: SourceURL) throws {
        guard isUDP, case .udp(let host, let port, let iface) = destination.transport else {
            throw SourceError.open("\(destination): several destinations must all be udp://")
        }
        guard iface == nil else { throw SourceError.open("\(destination): ?iface= applies to the first destination only") }
        let family = address.withUnsafeBytes { Int32($0.load(as: sockaddr.self).sa_family) }
        let addrs = try SocketAddress.resolve(host: host ?? "127.0.0.1", port: port, socketType: Socket.datagram, passive: false)
        guard let (_, addr) = addrs.first(where: { $0.0 == family }) else {
            throw SourceError.open("\(destination): not the same address family as \(label)")
        }
        guard addr != address && !copies.contains(addr) else { throw SourceError.open("\(destination): given twice") }
        copies.append(addr)
    }

    /// One datagram to every destination, from the one whose turn it is; each send counted.
    private func sendToEach(_ datagram: UnsafeRawBufferPointer) {
        guard let bytes = datagram.baseAddress else { return }
        let all = copies.isEmpty ? 1 : copies.count + 1
        for k in 0..<all {
            let i = (firstDestination + k) % all
            let rc = (i == 0 ? address : copies[i - 1]).withUnsafeBytes { a in
                sendto(fd, bytes, datagram.count, 0, a.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(a.count))
            }
            if rc < 0 { sendErrors += 1 } else { datagramsSent += 1; bytesSent += datagram.count }
        }
    }

    /// The next access unit goes first to the next destination.
    private func takeTurns() {
        if !copies.isEmpty { firstDestination = (firstDestination + 1) % (copies.count + 1) }
    }

    /// The UDP destinations that get every datagram (1 without ``alsoSend(to:)``).
    public var destinationCount: Int { copies.count + 1 }

    /// One step of SplitMix64: true with probability ``loss``.
    private func dropNext() -> Bool {
        lossState &+= 0x9E37_79B9_7F4A_7C15
        var z = lossState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53) < loss
    }

    /// True for a UDP destination.
    public var isDatagram: Bool { isUDP }

    /// The UDP destination's sockaddr bytes (nil for TCP and SRT).
    var datagramDestination: [UInt8]? { isUDP && !address.isEmpty ? address : nil }

    /// UDP: binds the socket to local `port` on every address of its family. Only before the
    /// first datagram (the kernel picks a port at the first `sendto` otherwise).
    /// - Returns: false when that port is taken, or the sender is not UDP.
    func bindLocalPort(_ port: UInt16) -> Bool {
        guard isUDP, datagramsSent == 0, address.count >= 2 else { return false }
        return Socket.bindLocal(fd, family: Int32(address.withUnsafeBytes { $0.load(as: sockaddr.self).sa_family }), port: port)
    }

    /// Sends one access unit (Annex B bytes): over UDP cut into datagrams of at most ``mtu``
    /// bytes; over TCP in one write; over SRT in messages of 1316 bytes. When the TCP or SRT
    /// receiver is gone, the connection is closed, logged once, and
    /// ``waitForReceiver(timeoutMicros:)`` gets the next one.
    public func send(_ bytes: [UInt8]) {
        if let srt {
            let r = bytes.withUnsafeBytes { srt.send($0) }
            datagramsSent += r.messages; bytesSent += r.bytes; sendErrors += r.failed ? 1 : 0
            return
        }
        guard fd >= 0 else { return }
        bytes.withUnsafeBytes { raw in
            if isUDP {
                var off = 0
                while off < raw.count {
                    let n = min(mtu, raw.count - off)
                    sendToEach(UnsafeRawBufferPointer(rebasing: raw[off..<off + n]))
                    off += n
                }
                takeTurns()
            } else {
                let written = writeAll(fd, raw, sendFlags: Int32(MSG_NOSIGNAL))
                bytesSent += written
                guard written == raw.count else {
                    sendErrors += 1
                    Glibc.close(fd)
                    fd = -1
                    if !lost {
                        Log.info("\(label): the receiver closed the connection; \(listenFD >= 0 ? "waiting for the next one" : "reconnecting")")
                        lost = true
                    }
                    return
                }
                datagramsSent += 1   // one write
            }
        }
    }

    /// SRT's statistics of the link (retransmissions sent, drops), for an SRT destination.
    public var srtStatistics: SRTStatistics? { srt?.statistics }

    /// Ends the stream: an SRT receiver first plays out what is in flight (up to 2 s and its
    /// latency); then the sockets close.
    public func finish() {
        srt?.finish()
        close()
    }

    /// Closes the sockets.
    public func close() {
        srt?.close()
        if fd >= 0 { Glibc.close(fd) }
        if listenFD >= 0 { Glibc.close(listenFD) }
        fd = -1
        listenFD = -1
    }
}
