#if canImport(Glibc)
import Glibc
#endif

/// An open MAVLink endpoint (``MAVLinkEndpoint``): a UDP socket or a serial device, read with a
/// timeout on one thread. Not shared: the telemetry link's thread owns it.
public final class MAVLinkPort {
    /// The endpoint it was opened from.
    public let endpoint: MAVLinkEndpoint
    private let fd: Int32
    /// udpout: where heartbeats go (sockaddr bytes).
    private let destination: [UInt8]?
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// Opens the endpoint: binds the UDP port, or opens and configures the serial device.
    /// - Throws: ``SourceError/open(_:)`` with the reason (port in use, no such device, …).
    public init(_ endpoint: MAVLinkEndpoint) throws {
        self.endpoint = endpoint
        switch endpoint {
        case .udpListen(let host, let port):
            let addresses = try SocketAddress.resolve(host: host, port: port, socketType: Socket.datagram, passive: true)
            switch Socket.bind(addresses, type: Socket.datagram, reuseAddress: false) {
            case .success(let s): fd = s
            case .failure(let f): throw SourceError.open("--mavlink \(endpoint): \(f.bindText(port: port))")
            }
            destination = nil
        case .udpOut(let host, let port):
            let addresses = try SocketAddress.resolve(host: host, port: port, socketType: Socket.datagram, passive: false)
            guard let (family, address) = addresses.first else { throw SourceError.open("--mavlink \(endpoint): cannot resolve \(host)") }
            let s = Socket.open(family: family, type: Socket.datagram)
            guard s >= 0 else { throw SourceError.open("--mavlink \(endpoint): \(errnoText(errno))") }
            fd = s
            destination = address
        case .serial(let path, let baud):
            fd = try Self.openSerial(path: path, baud: baud)
            destination = nil
        }
    }

    deinit { close(fd) }

    /// Opens a tty raw, 8N1, no flow control, at `baud`, non-blocking reads through `poll`.
    private static func openSerial(path: String, baud: Int) throws -> Int32 {
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw SourceError.open("--mavlink serial://\(path): \(errnoText(errno))") }
        var tio = termios()
        guard tcgetattr(fd, &tio) == 0 else {
            let why = errnoText(errno)
            close(fd)
            throw SourceError.open("--mavlink serial://\(path): not a serial device (\(why))")
        }
        cfmakeraw(&tio)
        tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD)
        tio.c_cflag &= ~(tcflag_t(CRTSCTS) | tcflag_t(CSTOPB) | tcflag_t(PARENB))
        cfsetspeed(&tio, speed_t(baudConstant(baud)))
        tcsetattr(fd, TCSANOW, &tio)
        return fd
    }

    /// The termios speed constant for a baud rate (``MAVLinkEndpoint/baudRates``).
    private static func baudConstant(_ baud: Int) -> Int32 {
        switch baud {
        case 1200: return B1200
        case 2400: return B2400
        case 4800: return B4800
        case 9600: return B9600
        case 19200: return B19200
        case 38400: return B38400
        case 115200: return B115200
        case 230400: return B230400
        case 460800: return B460800
        case 921600: return B921600
        default: return B57600
        }
    }

    /// Waits up to `timeoutMillis` for bytes and returns what one read gave (a datagram, or what
    /// the tty had); empty on timeout.
    /// - Throws: ``SourceError/read(_:)`` when the device went away (a radio unplugged) or the
    ///   socket failed.
    public func read(timeoutMillis: Int32) throws -> ArraySlice<UInt8> {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&p, 1, timeoutMillis)
        if ready < 0 && errno != EINTR { throw SourceError.read("\(endpoint): \(errnoText(errno))") }
        guard ready > 0 else { return [] }
        if p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 && p.revents & Int16(POLLIN) == 0 {
            throw SourceError.read("\(endpoint): the device went away")
        }
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
        if n < 0 { throw SourceError.read("\(endpoint): \(errnoText(errno))") }
        if n == 0, case .serial = endpoint { throw SourceError.read("\(endpoint): the device went away") }
        return buffer[0..<n]
    }

    /// Sends `bytes` (a heartbeat): to the udpout destination, or down the serial line; a
    /// listening UDP port sends nothing. Failures are ignored: the next heartbeat tries again.
    public func send(_ bytes: [UInt8]) {
        switch endpoint {
        case .udpOut:
            guard let destination else { return }
            _ = bytes.withUnsafeBytes { b in
                destination.withUnsafeBytes { a in
                    sendto(fd, b.baseAddress, b.count, 0, a.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(a.count))
                }
            }
        case .serial: _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        case .udpListen: break
        }
    }
}
