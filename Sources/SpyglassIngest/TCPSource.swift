#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassPipeline

/// An Annex B byte stream over TCP: either we connect to a sender (`tcp://HOST:PORT`), or we
/// listen and accept one (`tcp://[ADDR]:PORT?listen`).
///
/// TCP keeps no message boundaries; reads of any size give the same units. When the sender goes
/// away, ``read(into:timeoutMicros:)`` reports `.disconnected` once; then a client reconnects
/// with backoff (0.1 s doubling to 2 s) and a listener accepts the next sender, reporting
/// `.connected` when the stream starts over.
public final class TCPSource: ByteSource {
    /// The source as a URL: `tcp://HOST:PORT` or `tcp://[ADDR]:PORT?listen`.
    public let label: String
    /// Always true: the stream arrives in real time.
    public let deliversInRealTime = true
    /// Reads and bytes over all connections so far, connections made or accepted, and senders
    /// refused by `--allow-from`.
    public var counters: SourceCounters {
        var c = past
        if let s = stream?.counters { c.datagrams += s.datagrams; c.bytes += s.bytes }
        c.connections = connections
        c.disallowed = disallowed
        return c
    }
    private var listenFD: Int32 = -1
    private var stream: StreamFDSource?
    private var connections = 0
    private var disallowed = 0
    private var past = SourceCounters()
    private let allowFrom: [AddressPrefix]
    private var nextAttemptMicros: UInt64 = 0
    private var backoffMicros: UInt64 = 100_000
    /// True for a listener: a sender that leaves is followed by the next.
    public var acceptsNextSender: Bool { listeningPort > 0 }
    /// Local port of the listening socket (useful when 0 was asked for).
    public private(set) var listeningPort: UInt16 = 0
    /// The peer of the current connection, "host:port".
    public private(set) var peer: String = ""
    private let connectTarget: (String, UInt16)?

    /// Connects to a sender.
    /// - Parameter retryFirstConnection: when the first attempt fails, keep trying with the
    ///   reconnection's backoff instead of throwing (a wall's camera that is not up yet); the
    ///   failure is then ``connectionProblem``.
    /// - Throws: ``SourceError/open(_:)`` ("tcp://h:p: Connection refused") when the first attempt
    ///   fails and `retryFirstConnection` is false, or the host does not resolve.
    public init(connectTo host: String, port: UInt16, retryFirstConnection: Bool = false) throws {
        label = SourceURL.tcpConnect(host: host, port: port).description
        connectTarget = (host, port)
        allowFrom = []
        do { try connect() } catch SourceError.open(let why) where retryFirstConnection {
            Log.info("\(why): retrying")
            retryLater(why)
        }
    }

    /// Why the last connection attempt failed, while there is no connection (client only).
    public var connectionProblem: String? { stream == nil ? lastFailure : nil }
    private var lastFailure: String?

    /// Listens for one sender at a time.
    /// - Parameter allowFrom: senders accepted; others are closed at once and counted.
    /// - Throws: ``SourceError/open(_:)`` ("…: port 5600 already in use").
    public init(listenOn host: String?, port: UInt16, allowFrom: [AddressPrefix] = []) throws {
        label = SourceURL.tcpListen(host: host, port: port).description
        connectTarget = nil
        self.allowFrom = allowFrom
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Socket.stream, passive: true)
        switch Socket.bind(addrs, type: Socket.stream, reuseAddress: true, listenBacklog: 4) {
        case .success(let s): listenFD = s
        case .failure(let f): throw SourceError.open("\(label): \(f.bindText(port: port))")
        }
        listeningPort = Socket.localPort(listenFD) ?? 0
    }

    private func connect() throws {
        guard let (host, port) = connectTarget else { return }
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Socket.stream, passive: false)
        switch Socket.connect(addrs) {
        case .success(let s):
            Self.tune(s)
            stream = StreamFDSource(fd: s, label: label, deliversInRealTime: true)
            connections += 1
            peer = "\(host):\(port)"
            backoffMicros = 100_000
            lastFailure = nil
        case .failure(let f):
            throw SourceError.open("\(label): \(f.text)")
        }
    }

    /// TCP_NODELAY and a 4 MiB receive buffer on a connected socket.
    private static func tune(_ s: Int32) {
        Socket.setOption(s, Int32(IPPROTO_TCP), TCP_NODELAY, Int32(1))
        Socket.setOption(s, SOL_SOCKET, SO_RCVBUF, Int32(4 << 20))
    }

    /// Waits up to about `timeoutMicros` µs for stream bytes and reads what is there.
    ///
    /// With no connection, it accepts the next sender (listen) or tries to reconnect once the
    /// backoff has passed (client) instead of reading.
    /// - Returns: `.data` with the arrival time (µs, ``MonotonicClock``); `.disconnected` once
    ///   when the sender goes away; `.connected` when a new connection starts the stream over
    ///   (not for the first sender of a listener); `.timeout` otherwise.
    /// - Throws: ``SourceError/read(_:)`` ("…: read failed: …") on a read error other than
    ///   EINTR, EAGAIN or ECONNRESET (a reset counts as the sender going away).
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard let connection = stream else {
            return listenFD >= 0 ? acceptNext(timeoutMicros) : reconnect(timeoutMicros)
        }
        let ev = try connection.read(into: buffer, timeoutMicros: timeoutMicros)
        if ev == .end {
            // The sender went away: keep its counts, then wait for the next one.
            past.datagrams += connection.counters.datagrams
            past.bytes += connection.counters.bytes
            connection.close()
            stream = nil
            nextAttemptMicros = MonotonicClock.nowMicros() + backoffMicros
            return .disconnected
        }
        return ev
    }

    private func acceptNext(_ timeoutMicros: Int) -> SourceEvent {
        guard waitReadable(listenFD, timeoutMicros: timeoutMicros) else { return .timeout }
        var ss = sockaddr_storage()
        var sl = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let s = withUnsafeMutablePointer(to: &ss) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { spy_accept_cloexec(listenFD, UnsafeMutableRawPointer($0), &sl) }
        }
        guard s >= 0 else { return .timeout }
        if !allowFrom.isEmpty {
            let address = withUnsafePointer(to: &ss) { AddressPrefix.addressBytes(UnsafeRawPointer($0)) }
            if !allowFrom.contains(where: { $0.contains(address) }) {
                disallowed += 1
                Glibc.close(s)
                return .timeout
            }
        }
        Self.tune(s)
        peer = withUnsafePointer(to: &ss) { SocketAddress.describe(UnsafeRawPointer($0), length: sl) }
        stream = StreamFDSource(fd: s, label: label, deliversInRealTime: true)
        connections += 1
        return connections > 1 ? .connected : .timeout
    }

    private func reconnect(_ timeoutMicros: Int) -> SourceEvent {
        let now = MonotonicClock.nowMicros()
        if now < nextAttemptMicros {
            MonotonicClock.sleep(untilMicros: min(nextAttemptMicros, now + UInt64(timeoutMicros)))
            return .timeout
        }
        do {
            try connect()
            return .connected
        } catch {
            retryLater("\(error)")
            return .timeout
        }
    }

    private func retryLater(_ why: String) {
        lastFailure = why
        backoffMicros = min(backoffMicros * 2, 2_000_000)
        nextAttemptMicros = MonotonicClock.nowMicros() + backoffMicros
    }

    /// Closes the connection and the listening socket; no reconnection follows. Safe to call twice.
    public func close() {
        stream?.close()
        stream = nil
        if listenFD >= 0 { Glibc.close(listenFD) }
        listenFD = -1
    }

    deinit { close() }
}
