#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpyglassTransport
import SpyglassPipeline

/// An RTSP camera or server (RFC 2326): OPTIONS, DESCRIBE (the SDP's H.264/H.265 track, its
/// `a=control` and `sprop-*` parameter sets), SETUP, PLAY; keep-alive within the session
/// timeout; TEARDOWN on close. Delivers the RTP packets as datagrams, so the RTP path (marker
/// bit, jitter buffer, loss counting) applies unchanged. Basic and Digest authentication;
/// redirects; a server that goes away is reconnected with backoff.
///
/// RTCP (RFC 3550 §6) from the server, on the RTCP port (UDP) or interleaved channel 1 (TCP),
/// is delivered in band too, for its sender reports; receiver reports go back the same way.
public final class RTSPSource: ByteSource {
    public let label: String
    public let deliversInRealTime = true
    public var deliversDatagrams: Bool { true }
    public var countsAre: String { "packets" }
    public private(set) var counters = SourceCounters()
    /// The video track's SDP (codec, payload type, parameter sets) from DESCRIBE.
    public private(set) var sessionDescription = SessionDescription(text: "")
    /// Audio and other tracks the server offers (not played).
    public private(set) var otherTracks: [String] = []

    private let url: RTSPURL
    private let transportWanted: RTSPTransport
    private var transport: RTSPTransport = .udp
    private var control: RTSPControl?
    private var rtpFD: Int32 = -1
    /// The RTCP port over UDP (over TCP, RTCP rides on interleaved channel 1).
    private var rtcpPort: RTCPPort?
    private var baseURL = ""
    private var trackURL = ""
    private var keepAliveMethod = "OPTIONS"
    private var keepAliveMicros: UInt64 = 30_000_000
    private var lastKeepAlive: UInt64 = 0
    private var playStarted: UInt64 = 0
    private var packetsSincePlay = 0
    private var reconnectAt: UInt64?
    private var backoffMicros: UInt64 = 500_000
    /// RTCP packets received from the server (either transport).
    public private(set) var rtcpPackets = 0

    /// Connects and starts playing.
    /// - Parameters:
    ///   - url: the camera's URL, credentials included if it needs them.
    ///   - transport: `--rtsp-transport` (auto: UDP, then TCP).
    /// - Throws: ``SourceError/open(_:)``: connection refused, 404/454 and other statuses, a wrong
    ///   password (naming the realm), no H.264/H.265 track.
    ///   - retryFirstConnection: when the first attempt fails, keep trying with the
    ///     reconnection's backoff instead of throwing (a wall's camera that is down or rebooting);
    ///     the failure is then ``connectionProblem``.
    public init(url: RTSPURL, transport: RTSPTransport, retryFirstConnection: Bool = false) throws {
        self.url = url
        label = url.requestURL
        transportWanted = transport
        if url.security != .none && transport == .udp {
            Log.info("\(label): --rtsp-transport udp: the RTP goes over UDP outside the TLS connection, unencrypted (auto or tcp keeps it inside)")
        }
        do { try start(firstTransport) } catch where retryFirstConnection {
            Log.info("\(label): \(error): retrying")
            lastFailure = "\(error)"
            reconnectAt = MonotonicClock.nowMicros() + backoffMicros
        }
    }

    /// The video track's SDP once DESCRIBE has answered (nil while the camera was never reached).
    public var announcedSession: SessionDescription? { described ? sessionDescription : nil }
    private var described = false

    /// Why the last attempt to connect and play failed, while not playing.
    public var connectionProblem: String? { control == nil ? lastFailure : nil }
    private var lastFailure: String?

    deinit { close() }

    private func start(_ mode: RTSPTransport) throws {
        teardown()
        var target = url
        var response = RTSPResponse()
        var c: RTSPControl!
        for _ in 0..<4 {
            c = try RTSPControl(host: target.host, port: target.port, user: url.user, password: url.password, security: target.security)
            let options = try c.request("OPTIONS", target.requestURL)
            let methods = options.header("public")?.uppercased() ?? ""
            keepAliveMethod = methods.contains("GET_PARAMETER") ? "GET_PARAMETER" : "OPTIONS"
            response = try c.request("DESCRIBE", target.requestURL, headers: [("Accept", "application/sdp")])
            if (301...307).contains(response.status), let location = response.header("location") {
                target = try RTSPURL(parsing: location)   // RFC 2326 §11.3.3: redirect
                // `?insecure` was the user's word for this camera: it holds where it redirects.
                if url.security == .tls(checkCertificate: false), target.security != .none { target.security = url.security }
                continue
            }
            break
        }
        try Self.check(response, "DESCRIBE", target.requestURL)
        control = c
        baseURL = response.header("content-base") ?? response.header("content-location") ?? target.requestURL
        try readSDP(response.body)
        var mode = mode
        var setup = try self.setup(mode, c)
        if Self.refusesTransport(setup), let other = fallback(from: mode) {
            // RFC 2326 §11.4.8: 461 Unsupported Transport (or a refusal that offers no
            // Transport): the other lower transport, on the same connection when the server
            // keeps it open, else on a new one.
            Log.info("\(label): SETUP over \(mode == .tcp ? "TCP" : "UDP") answered \(setup.status) \(Self.printable(setup.reason)): trying \(other == .tcp ? "TCP (interleaved)" : "UDP")")
            closeMedia()
            mode = other
            if let again = try? self.setup(mode, c) {
                setup = again
            } else {
                c = try RTSPControl(host: target.host, port: target.port, user: url.user, password: url.password, security: target.security)
                control = c
                setup = try self.setup(mode, c)
            }
        }
        try Self.check(setup, "SETUP", trackURL)
        if let s = setup.header("session") {
            let (id, timeoutSeconds) = Self.session(s)
            guard !id.isEmpty else { throw SourceError.open("\(trackURL): SETUP answered an empty Session header") }
            c.session = id
            // Keep-alive at half the session timeout (RFC 2326 §12.37; default 60 s), at most daily.
            if let t = timeoutSeconds { keepAliveMicros = UInt64(min(max(1, t), 86_400)) * 1_000_000 / 2 }
        }
        let play = try c.request("PLAY", baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL, headers: [("Range", "npt=0.000-")])
        try Self.check(play, "PLAY", baseURL)
        let now = MonotonicClock.nowMicros()
        lastKeepAlive = now
        playStarted = now
        packetsSincePlay = 0
        counters.connections += 1
        Log.info("\(label): playing over \(mode == .tcp ? "TCP (interleaved)" : "UDP")"
                 + (otherTracks.isEmpty ? "" : "; also offered, not played: \(Self.list(otherTracks))"))
    }

    /// Sends SETUP for `mode` (binding the UDP pair first); keeps the RTCP port's address.
    private func setup(_ mode: RTSPTransport, _ c: RTSPControl) throws -> RTSPResponse {
        transport = mode
        var transportHeader = "RTP/AVP/TCP;unicast;interleaved=0-1"
        var rtcpFD: Int32 = -1
        if mode == .udp {
            let (rtp, rtcp, port) = try Self.udpPair()
            rtpFD = rtp; rtcpFD = rtcp
            transportHeader = "RTP/AVP;unicast;client_port=\(port)-\(port + 1)"
        }
        let setup = try c.request("SETUP", trackURL, headers: [("Transport", transportHeader)])
        if rtcpFD >= 0 {
            rtcpPort = RTCPPort(fd: rtcpFD, destination: Self.serverRTCPAddress(setup, control: c.fd))
        }
        return setup
    }

    /// A SETUP refused for its transport: 461 Unsupported Transport (RFC 2326 §11.4.8), or any
    /// other 4xx that names no Transport of its own.
    static func refusesTransport(_ r: RTSPResponse) -> Bool {
        r.status == 461 || ((400...499).contains(r.status) && r.status != 401 && r.status != 404 && r.header("transport") == nil)
    }

    /// The lower transport tried first: TCP when asked for, and for `rtsps://` in auto mode (the
    /// RTP then rides inside the TLS connection, not in the clear beside it); else UDP.
    private var firstTransport: RTSPTransport {
        transportWanted == .tcp || (transportWanted == .auto && url.security != .none) ? .tcp : .udp
    }

    /// The transport to try when the server refuses `mode`: TCP after UDP in auto mode, UDP
    /// after TCP when TCP was asked for (`--rtsp-transport tcp`); none after auto mode's TCP (its UDP
    /// already failed) or a UDP that was asked for.
    private func fallback(from mode: RTSPTransport) -> RTSPTransport? {
        switch (mode, transportWanted) {
        case (.udp, .auto): return .tcp
        case (.tcp, .tcp): return .udp
        default: return nil
        }
    }

    /// Closes the UDP sockets of a refused SETUP.
    private func closeMedia() {
        if rtpFD >= 0 { Glibc.close(rtpFD) }
        rtpFD = -1
        rtcpPort = nil
    }

    /// A server's text as one safe log line: control characters (a terminal's escape sequences)
    /// shown as `?`, and at most 60 characters.
    static func printable(_ text: String) -> String {
        let clean = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
        return clean.count > 60 ? String(clean.prefix(59)) + "…" : clean
    }

    /// The first 8 of `items`, and how many more.
    package static func list(_ items: [String]) -> String {
        items.prefix(8).joined(separator: ", ") + (items.count > 8 ? " and \(items.count - 8) more" : "")
    }

    /// A `Session:` header's id and `timeout=` in seconds (RFC 2326 §12.37), read from a server's
    /// text: an empty or unreadable part is nil, never a trap.
    static func session(_ header: String) -> (id: String, timeoutSeconds: UInt64?) {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        let id = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let timeout = parts.dropFirst().lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("timeout=") }
            .flatMap { UInt64($0.dropFirst("timeout=".count)) }
        return (id, timeout)
    }

    /// A status that is not 2xx is a one-line error (RFC 2326 §7.1.1: 404 Not Found, 454
    /// Session Not Found, 461 Unsupported Transport …).
    private static func check(_ r: RTSPResponse, _ method: String, _ url: String) throws {
        guard (200...299).contains(r.status) else {
            throw SourceError.open("\(url): \(method) answered \(r.status) \(r.reason)")
        }
    }

    /// Picks the H.264/H.265 video track of the SDP and its control URL; with none, an MPEG-TS
    /// track (`a=rtpmap:33 MP2T/90000`, RFC 2250, as encoders, SAT>IP servers and VLC serve),
    /// whose TS is demultiplexed as over plain UDP (``RTPMPEGTSDepacketizer``).
    private func readSDP(_ text: String) throws {
        let sections = MediaSection.sections(in: text)
        let isTS = { (s: MediaSection) in s.encodingName?.uppercased().hasPrefix("MP2T") == true }
        let chosen = try url.track.map { try Self.track($0, of: sections, label) }
            ?? (url.selectsWithinMPEGTS ? sections.first(where: isTS) : nil)
            ?? sections.first { $0.media == "video" && $0.description.codec != nil }
            ?? sections.first(where: isTS)
        if url.selectsWithinMPEGTS, let chosen, !isTS(chosen) {
            throw SourceError.open("\(label): ?program=/?pid= choose within MPEG-TS, and the track played is \(Self.printable(chosen.encodingName ?? chosen.media)), not MP2T")
        }
        otherTracks = sections.filter { $0 != chosen }.map { Self.printable($0.media + ($0.encodingName.map { " (\($0))" } ?? "")) }
        guard let chosen else {
            throw SourceError.open("\(label): the server offers no H.264/H.265 or MPEG-TS video track (\(otherTracks.isEmpty ? "no tracks" : Self.list(otherTracks)))")
        }
        sessionDescription = chosen.description
        described = true
        let control = chosen.control ?? "*"
        if control.lowercased().hasPrefix("rtsp://") || control.lowercased().hasPrefix("rtsps://") { trackURL = control }
        else if control == "*" { trackURL = baseURL }
        else { trackURL = (baseURL.hasSuffix("/") ? baseURL : baseURL + "/") + control }
    }

    /// The track `?track=` names: by its 1-based place among the SDP's media sections, or by
    /// its `a=control` value. - Throws: ``SourceError/open(_:)`` when there is none such, or it
    /// is neither H.264/H.265 video nor MPEG-TS (naming what it is).
    static func track(_ choice: String, of sections: [MediaSection], _ label: String) throws -> MediaSection {
        let found = Int(choice).flatMap { (1...sections.count).contains($0) ? sections[$0 - 1] : nil }
            ?? sections.first { $0.control == choice }
        let list = sections.enumerated().map { i, s in
            "\(i + 1): \(printable(s.media + (s.encodingName.map { " \($0)" } ?? "") + (s.control.map { " (\($0))" } ?? "")))"
        }
        guard let found else { throw SourceError.open("\(label): no track '\(printable(choice))' (the server offers \(list.joined(separator: ", ")))") }
        guard found.description.codec != nil || found.encodingName?.uppercased().hasPrefix("MP2T") == true else {
            throw SourceError.open("\(label): track '\(printable(choice))' is \(printable(found.media)) \(printable(found.encodingName ?? "with no rtpmap")), not H.264/H.265 or MPEG-TS")
        }
        return found
    }

    /// Where the server takes RTCP over UDP: its address on the control connection, at the second
    /// port of the SETUP answer's `server_port=RTP-RTCP` (RFC 2326 §12.39). Nil when it gave none
    /// (reports then go where its RTCP comes from).
    private static func serverRTCPAddress(_ setup: RTSPResponse, control fd: Int32) -> [UInt8]? {
        guard let transport = setup.header("transport"),
              let ports = transport.split(separator: ";").first(where: { $0.hasPrefix("server_port=") }),
              let rtcp = ports.dropFirst("server_port=".count).split(separator: "-").last.flatMap({ UInt16($0) }) else { return nil }
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &peer) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(peer.ss_family) {
        case AF_INET:
            withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = rtcp.bigEndian } }
        case AF_INET6:
            withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = rtcp.bigEndian } }
        default:
            return nil
        }
        return withUnsafeBytes(of: &peer) { Array($0.prefix(Int(length))) }
    }

    /// A UDP socket pair on consecutive ports, RTP even (RFC 3550 §11).
    private static func udpPair() throws -> (Int32, Int32, UInt16) {
        for _ in 0..<20 {
            let addresses = try SocketAddress.resolve(host: nil, port: 0, socketType: Socket.datagram, passive: true)
            guard case .success(let rtp) = Socket.bind(addresses, type: Socket.datagram, reuseAddress: false),
                  let port = Socket.localPort(rtp) else { continue }
            if port % 2 == 0, port < 65535,
               let next = try? SocketAddress.resolve(host: nil, port: port + 1, socketType: Socket.datagram, passive: true),
               case .success(let rtcp) = Socket.bind(next, type: Socket.datagram, reuseAddress: false) {
                Socket.setOption(rtp, SOL_SOCKET, SO_RCVBUF, Int32(4 << 20))
                return (rtp, rtcp, port)
            }
            Glibc.close(rtp)
        }
        throw SourceError.open("no free UDP port pair for RTP/RTCP")
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        let now = MonotonicClock.nowMicros()
        if let at = reconnectAt {
            guard now >= at else { usleep(UInt32(min(UInt64(timeoutMicros), at - now))); return .timeout }
            do {
                try start(firstTransport)
                reconnectAt = nil
                backoffMicros = 500_000
                lastFailure = nil
                return .connected
            } catch {
                if "\(error)" != lastFailure { Log.info("\(label): reconnecting: \(error)") }
                lastFailure = "\(error)"
                backoffMicros = min(backoffMicros * 2, 8_000_000)
                reconnectAt = now + backoffMicros
                return .timeout
            }
        }
        guard let c = control else { return .end }
        if now >= lastKeepAlive + keepAliveMicros {
            c.post(keepAliveMethod, baseURL)   // RFC 2326 §12.37: within the session timeout
            lastKeepAlive = now
        }
        do {
            if transport == .tcp { return try readInterleaved(c, buffer, timeoutMicros) }
            return try readUDP(c, buffer, timeoutMicros)
        } catch {
            Log.info("\(label): the server went away (\(error)): reconnecting")
            teardown()
            reconnectAt = MonotonicClock.nowMicros() + backoffMicros
            return .disconnected
        }
    }

    private func readInterleaved(_ c: RTSPControl, _ buffer: UnsafeMutableRawBufferPointer, _ timeoutMicros: Int) throws -> SourceEvent {
        let deadline = MonotonicClock.nowMicros() + UInt64(max(0, timeoutMicros))
        while true {
            let left = Int(deadline) - Int(MonotonicClock.nowMicros())
            guard let f = try c.readFrame(timeoutMicros: max(0, left)) else { return .timeout }
            if f.channel == 1 {
                // RTCP goes on in band to the stream's RTCP session (RFC 5761 §4 tells it apart).
                rtcpPackets += 1
                return deliver(f.payload, buffer, rtp: false)
            }
            guard f.channel == 0 else { continue }
            return deliver(f.payload, buffer)
        }
    }

    /// Sends what the stream's RTCP session has for the server: on interleaved channel 1 over
    /// TCP (RFC 2326 §10.12), or to its RTCP port (`server_port`) over UDP.
    public func sendToSender(_ packet: [UInt8]) -> Bool {
        guard let c = control, packet.count <= Int(UInt16.max) else { return false }
        if transport == .tcp {
            let frame: [UInt8] = [0x24, 1, UInt8(packet.count >> 8), UInt8(packet.count & 0xFF)] + packet
            return c.write(frame)
        }
        return rtcpPort?.send(packet) ?? false
    }

    private func readUDP(_ c: RTSPControl, _ buffer: UnsafeMutableRawBufferPointer, _ timeoutMicros: Int) throws -> SourceEvent {
        guard let rtcp = rtcpPort else { return .end }
        var fds = [pollfd(fd: rtpFD, events: Int16(POLLIN), revents: 0), pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: rtcp.fd, events: Int16(POLLIN), revents: 0)]
        // Whole milliseconds, rounded up: a wait under 1 ms must not become a busy poll(0).
        let rc = poll(&fds, nfds_t(fds.count), Int32(max(0, (timeoutMicros + 999) / 1000)))
        if rc <= 0 { return noUDPYet() }
        if fds[1].revents != 0 {
            guard c.fill() else { throw SourceError.read("the RTSP server closed the connection") }
            while (try? c.readFrame(timeoutMicros: 0)) != nil {}   // drop keep-alive answers
        }
        if fds[2].revents != 0, let n = rtcp.receive(into: buffer) {
            rtcpPackets += 1
            return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: false)
        }
        guard fds[0].revents != 0 else { return noUDPYet() }
        let n = Glibc.recv(rtpFD, buffer.baseAddress, buffer.count, 0)
        guard n > 0 else { return .emptyDatagram }
        let now = MonotonicClock.nowMicros()
        packetsSincePlay += 1
        counters.datagrams += 1
        counters.bytes += n
        return .data(count: n, arrivalMicros: now, truncated: false)
    }

    /// With auto transport, no UDP packet a second after PLAY: the server's UDP does not reach
    /// us; play again over TCP.
    private func noUDPYet() -> SourceEvent {
        guard transportWanted == .auto, packetsSincePlay == 0, MonotonicClock.nowMicros() > playStarted + 1_000_000 else { return .timeout }
        Log.info("\(label): no RTP over UDP in 1 s: trying TCP (interleaved)")
        do { try start(.tcp); return .connected } catch {
            reconnectAt = MonotonicClock.nowMicros() + backoffMicros
            return .disconnected
        }
    }

    /// Copies an interleaved frame out as a datagram; only RTP (`rtp`) counts as data received.
    private func deliver(_ payload: [UInt8], _ buffer: UnsafeMutableRawBufferPointer, rtp: Bool = true) -> SourceEvent {
        let n = buffer.copyPrefix(of: payload)
        if rtp {
            packetsSincePlay += 1
            counters.datagrams += 1
            counters.bytes += n
        }
        return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: n < payload.count)
    }

    private func teardown() {
        if let c = control { c.post("TEARDOWN", baseURL) }
        control = nil
        if rtpFD >= 0 { Glibc.close(rtpFD); rtpFD = -1 }
        rtcpPort = nil
    }

    public func close() { teardown() }
}
