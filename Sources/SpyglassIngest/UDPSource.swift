#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassTransport
import SpyglassPipeline

/// Receives datagrams on a bound UDP socket.
///
/// Each datagram is read whole (the buffer holds 65,535 bytes, the IPv4 maximum); one that is
/// still cut (MSG_TRUNC) is counted and reported as truncated. Zero-length datagrams are
/// counted and never passed on. The socket asks for a large receive buffer so that a keyframe
/// burst is not dropped by the kernel while a frame decodes.
public final class UDPSource: ByteSource {
    /// The source as a URL, `udp://[ADDR]:PORT[?iface=…]`; with port 0 asked for, the port bound.
    public private(set) var label: String
    /// Always true: datagrams arrive in real time.
    public let deliversInRealTime = true
    /// Always true: each read is one datagram (so RTP can be detected, RFC 3550 §5.1).
    public var deliversDatagrams: Bool { true }
    /// Datagrams, bytes, empty, cut (MSG_TRUNC) and refused (`--allow-from`) datagrams so far.
    public private(set) var counters = SourceCounters()
    /// Receive buffer the kernel granted, bytes (as `getsockopt(SO_RCVBUF)` reports it).
    public let grantedReceiveBufferBytes: Int
    /// The local port actually bound (useful when port 0 was asked for).
    public let boundPort: UInt16
    private var fd: Int32
    private let allowFrom: [AddressPrefix]
    /// The multicast group joined, if any, and the `?iface=` it was joined on (nil: the kernel's choice).
    private let multicastGroup: (address: String, prefix: AddressPrefix, interface: String?)?
    /// The RTCP socket on port + 1, bound once RTP is seen (RFC 3550 §11); nil before, or when
    /// that port is taken.
    private var rtcp: RTCPPort?
    private var rtcpTried = false
    /// The stream is declared RTP: port + 1 is bound at the first datagram, not after two RTP
    /// packets agree (not at open: the next port may be another feed's, opened after this one).
    private var rtpDeclared = false
    /// The last datagram that looked like RTP (SSRC, sequence number): RTCP's port is bound only
    /// once two in a row agree, so a raw Annex B or MPEG-TS stream, whose bytes look like an RTP
    /// header now and then, never takes port + 1 from a neighbouring feed.
    private var rtpCandidate: (ssrc: UInt32, sequence: UInt16)?
    private let bindHost: String?
    /// The sender this port listens to (the first heard, until it falls silent for 100 ms).
    private var latch = SenderLatch<UDPPeer>()

    /// Joins a multicast group (IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP).
    private static func join(_ fd: Int32, group: AddressPrefix, interface: String?, label: String) throws {
        var ifindex: UInt32 = 0
        var ifaddr = in_addr(s_addr: 0)
        if let interface {
            guard let named = Socket.multicastInterface(interface) else {
                throw SourceError.open("\(label): no interface '\(interface)'")
            }
            (ifaddr, ifindex) = named
        }
        let joined: Bool
        if group.bytes.count == 4 {
            var m = ip_mreqn()
            m.imr_multiaddr = group.bytes.withUnsafeBytes { $0.load(as: in_addr.self) }
            m.imr_address = ifaddr
            m.imr_ifindex = Int32(ifindex)
            joined = Socket.setOption(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, m)
            // Linux delivers every joined group on this port to every socket bound to it unless
            // told not to (IP_MULTICAST_ALL, linux/in.h 49): two feeds on one port, two groups.
            Socket.setOption(fd, Int32(IPPROTO_IP), 49, Int32(0))
        } else {
            var m = ipv6_mreq()
            m.ipv6mr_multiaddr = group.bytes.withUnsafeBytes { $0.load(as: in6_addr.self) }
            m.ipv6mr_interface = ifindex
            joined = Socket.setOption(fd, Int32(IPPROTO_IPV6), IPV6_ADD_MEMBERSHIP, m)
        }
        guard joined else { throw SourceError.open("\(label): cannot join the multicast group: \(errnoText())") }
    }

    /// Largest UDP payload over IPv4/IPv6 without jumbograms, bytes.
    public static let maxDatagramBytes = 65_535

    /// Bytes read per datagram; a longer datagram is cut and counted.
    public let readBufferBytes: Int

    /// Binds `host:port` (host nil = all interfaces).
    /// - Parameters:
    ///   - receiveBufferBytes: kernel receive buffer to ask for (default 8 MiB).
    ///   - readBufferBytes: bytes read per datagram (default 65,535: every UDP datagram whole).
    ///   - multicastInterface: for a multicast group, the interface to join on (name or address).
    ///   - allowFrom: senders accepted; others are dropped and counted (empty = all).
    ///   - label: the name in log lines (default: the URL).
    ///   - bindRTCPAtOnce: the stream is declared RTP: bind port + 1 for RTCP at the first
    ///     datagram, not once two RTP packets agree (RFC 3550 §11).
    /// - Throws: ``SourceError/open(_:)``, e.g. "udp://:5600: port already in use".
    public init(host: String?, port: UInt16, receiveBufferBytes: Int = 8 << 20,
                readBufferBytes: Int = UDPSource.maxDatagramBytes, multicastInterface: String? = nil,
                allowFrom: [AddressPrefix] = [], label: String? = nil, bindRTCPAtOnce: Bool = false) throws {
        self.readBufferBytes = max(1, min(readBufferBytes, UDPSource.maxDatagramBytes))
        self.allowFrom = allowFrom
        let label = label ?? SourceURL.udp(host: host, port: port, interface: multicastInterface).description
        self.label = label
        let group = host.flatMap { AddressPrefix($0) }
        let isMulticast = group?.isMulticast ?? false
        multicastGroup = isMulticast ? (host!, group!, multicastInterface) : nil
        // A multicast receiver binds the group's port on all addresses, shared with other receivers.
        let bindHost: String? = isMulticast ? (group!.bytes.count == 4 ? "0.0.0.0" : "::") : host
        self.bindHost = bindHost
        let addrs = try SocketAddress.resolve(host: bindHost, port: port, socketType: Socket.datagram, passive: true)
        let bound: Int32
        switch Socket.bind(addrs, type: Socket.datagram, reuseAddress: isMulticast) {
        case .success(let s): bound = s
        case .failure(let f): throw SourceError.open("\(label): \(f.bindText(port: port))")
        }
        if isMulticast, let group {
            try Self.join(bound, group: group, interface: multicastInterface, label: label)
        }
        fd = bound
        let fd = bound
        // SO_RCVBUFFORCE passes the rmem_max cap when we are root; SO_RCVBUF otherwise.
        let want = Int32(receiveBufferBytes)
        if !Socket.setOption(fd, SOL_SOCKET, SO_RCVBUFFORCE, want) {
            Socket.setOption(fd, SOL_SOCKET, SO_RCVBUF, want)
        }
        var got: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len)
        grantedReceiveBufferBytes = Int(got)
        let port = Socket.localPort(fd) ?? port
        boundPort = port
        if label.hasSuffix(":0") || label.contains(":0?") {
            // Port 0 asked for: name the port the kernel gave.
            self.label = SourceURL.udp(host: host, port: port, interface: multicastInterface).description
        }
        rtpDeclared = bindRTCPAtOnce
    }

    /// Waits up to `timeoutMicros` µs for one datagram of the stream's sender and reads it into
    /// `buffer` (at most ``readBufferBytes``).
    ///
    /// Datagrams refused by `--allow-from`, or from another sender than the established one
    /// (``SenderLatch``), are dropped and counted, and the wait goes on: a flood from another
    /// socket wakes the pipeline for nothing.
    /// - Returns: `.data` with the arrival time (µs, ``MonotonicClock``) and whether the datagram
    ///   was cut; `.emptyDatagram` for a zero-length one; `.timeout` when none came (or on
    ///   EINTR/EAGAIN); `.end` after ``close()``.
    /// - Throws: ``SourceError/read(_:)`` ("…: recv failed: …") on any other receive error.
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        let deadline = MonotonicClock.nowMicros() + UInt64(max(0, timeoutMicros))
        var wait = timeoutMicros
        while true {
            if let event = try readOnce(into: buffer, timeoutMicros: wait) { return event }
            let now = MonotonicClock.nowMicros()
            guard now < deadline else { return .timeout }
            wait = Int(deadline - now)
        }
    }

    /// One wait and one datagram; nil when the datagram was refused (counted).
    private func readOnce(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent? {
        guard fd >= 0 else { return .end }
        let ready = waitReadable(timeoutMicros)
        if ready.rtcp, let rtcp {
            let (notRTCPBefore, otherBefore) = (rtcp.notRTCP, rtcp.otherHost)
            let got = rtcp.receive(into: buffer, rtpSender: latch.current)
            counters.notRTCP += rtcp.notRTCP - notRTCPBefore
            counters.otherSender += rtcp.otherHost - otherBefore
            guard let n = got else { return nil }
            // RTCP goes on in band: the RTP depacketizer tells it apart (RFC 5761 §4).
            return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: false)
        }
        guard ready.rtp else { return .timeout }
        // MSG_TRUNC makes recv return the datagram's real length, so a cut is visible.
        let room = min(buffer.count, readBufferBytes)
        var peer = sockaddr_storage()
        var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &peer) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fd, buffer.baseAddress, room, Int32(MSG_TRUNC | MSG_DONTWAIT), $0, &peerLength)
            }
        }
        let now = MonotonicClock.nowMicros()
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return .timeout }
            throw SourceError.read("\(label): recv failed: \(errnoText())")
        }
        if !allowFrom.isEmpty {
            let address = withUnsafePointer(to: &peer) { AddressPrefix.addressBytes(UnsafeRawPointer($0)) }
            if !allowFrom.contains(where: { $0.contains(address) }) {
                counters.disallowed += 1
                return nil
            }
        }
        guard latch.admit(withUnsafePointer(to: &peer) { UDPPeer(UnsafeRawPointer($0)) }, nowMicros: now) else {
            counters.otherSender += 1
            return nil
        }
        counters.senderTakeovers = latch.takeovers
        if n == 0 {
            counters.emptyDatagrams += 1
            return .emptyDatagram
        }
        let truncated = n > room
        let count = min(n, room)
        counters.datagrams += 1
        counters.bytes += count
        if truncated { counters.truncatedDatagrams += 1 }
        if !rtcpTried && rtpDeclared {
            rtcpTried = true
            bindRTCP()
        } else if !rtcpTried {
            bindRTCPOnceRTPIsCertain(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        return .data(count: count, arrivalMicros: now, truncated: truncated)
    }

    /// Waits for the RTP socket (and the RTCP one, once bound) to become readable.
    private func waitReadable(_ timeoutMicros: Int) -> (rtp: Bool, rtcp: Bool) {
        guard let rtcp else { return (SpyglassIngest.waitReadable(fd, timeoutMicros: timeoutMicros), false) }
        let mask = spy_wait_readable2(fd, rtcp.fd, timeoutMicros)
        return mask > 0 ? (mask & 1 != 0, mask & 2 != 0) : (false, false)
    }

    /// Binds the RTCP port once RTP is certain: two packets in sequence from one SSRC, as RFC
    /// 3550 §A.1 validates a source. What it receives goes on in band to the stream's RTCP
    /// session; what the session has for the sender comes back through ``sendToSender(_:)``.
    private func bindRTCPOnceRTPIsCertain(_ datagram: UnsafeRawBufferPointer) {
        // Dynamic payload types (H.264/H.265) or 33 (MPEG-TS, RFC 2250 §2: ffmpeg's rtp_mpegts).
        let mp2t = datagram.count >= 12 && datagram[0] >> 6 == 2 && datagram[1] & 0x7F == 33
        guard RTPPacket.looksLikeRTP(datagram) || mp2t, let header = RTPPacket.fixedHeader(datagram) else { rtpCandidate = nil; return }
        defer { rtpCandidate = (header.ssrc, header.sequenceNumber) }
        guard let last = rtpCandidate, last.ssrc == header.ssrc, header.sequenceNumber == last.sequence &+ 1 else { return }
        rtcpTried = true
        bindRTCP()
    }

    public func sendToSender(_ packet: [UInt8]) -> Bool { rtcp?.send(packet, rtpSender: latch.current) ?? false }

    /// Binds port + 1 (joining the multicast group there too); a port taken is one log line.
    private func bindRTCP() {
        guard boundPort < UInt16.max else { return }
        let port = boundPort + 1
        guard let addresses = try? SocketAddress.resolve(host: bindHost, port: port, socketType: Socket.datagram, passive: true),
              case .success(let s) = Socket.bind(addresses, type: Socket.datagram, reuseAddress: multicastGroup != nil) else {
            Log.info("\(label): RTCP port \(port) is taken: no sender reports, no receiver reports")
            return
        }
        if let g = multicastGroup, (try? Self.join(s, group: g.prefix, interface: g.interface, label: label)) == nil {
            Glibc.close(s)
            return
        }
        rtcp = RTCPPort(fd: s, allowFrom: allowFrom)
    }

    /// For a multicast group from which nothing at all has come (not even an empty or refused
    /// datagram): the interface it was joined on and the interfaces a sender could be on, with
    /// `?iface=NAME` as the way to another one (``MulticastDiagnosis``). Nil otherwise.
    /// - Parameter silentMicros: how long nothing has come, µs.
    public func silenceDiagnosis(silentMicros: UInt64) -> String? {
        guard let g = multicastGroup else { return nil }
        let c = counters
        guard c.datagrams + c.emptyDatagrams + c.disallowed + c.truncatedDatagrams == 0 else { return nil }
        return MulticastDiagnosis.line(label: label, group: g.address, port: boundPort, asked: g.interface,
                                       joinedOn: MulticastDiagnosis.joinedInterfaces(group: g.prefix.bytes),
                                       chosenByRoute: g.prefix.bytes.count == 4 ? MulticastDiagnosis.routeInterface(group: g.prefix.bytes) : nil,
                                       interfaces: MulticastDiagnosis.candidateInterfaces(),
                                       silentSeconds: Double(silentMicros) / 1e6)
    }

    /// Closes the socket (leaving a joined multicast group). Safe to call twice.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        rtcp = nil
    }

    deinit { close() }
}
