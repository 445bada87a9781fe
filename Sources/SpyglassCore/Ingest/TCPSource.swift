#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// An Annex B byte stream over TCP: either we connect to a sender (`tcp://HOST:PORT`), or we
/// listen and accept one (`tcp://[ADDR]:PORT?listen`).
///
/// TCP keeps no message boundaries; reads of any size give the same units.
/// When the connection ends, ``read(into:timeoutMicros:)`` reports `.end`.
public final class TCPSource: ByteSource {
    public let label: String
    public let isLive = true
    public var counters: SourceCounters { var c = stream?.counters ?? SourceCounters(); c.connections = connections; c.datagrams += pastDatagrams; c.bytes += pastBytes; return c }
    private var listenFD: Int32 = -1
    private var stream: StreamFDSource?
    private var connections = 0
    private var pastDatagrams = 0
    private var pastBytes = 0
    /// Local port of the listening socket (useful when 0 was asked for).
    public private(set) var listeningPort: UInt16 = 0
    /// The peer of the current connection, "host:port".
    public private(set) var peer: String = ""
    private let connectTarget: (String, UInt16)?

    /// Connects to a sender.
    /// - Throws: ``SourceError/open(_:)`` ("tcp://h:p: Connection refused").
    public init(connectTo host: String, port: UInt16) throws {
        label = SourceURL.tcpConnect(host: host, port: port).description
        connectTarget = (host, port)
        try connect()
    }

    /// Listens for one sender at a time.
    /// - Throws: ``SourceError/open(_:)`` ("…: port 5600 already in use").
    public init(listenOn host: String?, port: UInt16) throws {
        label = SourceURL.tcpListen(host: host, port: port).description
        connectTarget = nil
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Int32(SOCK_STREAM.rawValue), passive: true)
        var lastError = "no address"
        for (family, addr) in addrs {
            let s = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard s >= 0 else { lastError = errnoText(); continue }
            var one: Int32 = 1
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            let rc = addr.withUnsafeBytes { bind(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
            if rc == 0 && listen(s, 4) == 0 { listenFD = s; break }
            lastError = errno == EADDRINUSE ? "port \(port) already in use" : errnoText()
            Glibc.close(s)
        }
        guard listenFD >= 0 else { throw SourceError.open("\(label): \(lastError)") }
        var sin = sockaddr_in()
        var sl = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &sin) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listenFD, $0, &sl) }
        }
        listeningPort = UInt16(bigEndian: sin.sin_port)
    }

    private func connect() throws {
        guard let (host, port) = connectTarget else { return }
        let addrs = try SocketAddress.resolve(host: host, port: port, socketType: Int32(SOCK_STREAM.rawValue), passive: false)
        var lastError = "no address"
        for (family, addr) in addrs {
            let s = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard s >= 0 else { lastError = errnoText(); continue }
            let rc = addr.withUnsafeBytes { Glibc.connect(s, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count)) }
            if rc == 0 {
                Self.tune(s)
                stream = StreamFDSource(fd: s, label: label, isLive: true)
                connections += 1
                peer = "\(host):\(port)"
                return
            }
            lastError = errnoText()
            Glibc.close(s)
        }
        throw SourceError.open("\(label): \(lastError)")
    }

    private static func tune(_ s: Int32) {
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var buf: Int32 = 4 << 20
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, socklen_t(MemoryLayout<Int32>.size))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        if stream == nil && listenFD >= 0 {
            guard waitReadable(listenFD, timeoutMicros: timeoutMicros) else { return .timeout }
            var ss = sockaddr_storage()
            var sl = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let s = withUnsafeMutablePointer(to: &ss) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { spy_accept_cloexec(listenFD, UnsafeMutableRawPointer($0), &sl) }
            }
            guard s >= 0 else { return .timeout }
            Self.tune(s)
            peer = withUnsafePointer(to: &ss) { SocketAddress.describe(UnsafeRawPointer($0), length: sl) }
            stream = StreamFDSource(fd: s, label: label, isLive: true)
            connections += 1
            return .timeout
        }
        guard let stream else { return .end }
        let ev = try stream.read(into: buffer, timeoutMicros: timeoutMicros)
        return ev
    }

    public func close() {
        stream?.close()
        if listenFD >= 0 { Glibc.close(listenFD) }
        listenFD = -1
    }

    deinit { close() }
}
