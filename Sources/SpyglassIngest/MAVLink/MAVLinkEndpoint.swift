import Foundation
/// Where a feed's MAVLink telemetry comes from (`--mavlink URL`).
///
/// - `udp://[HOST]:PORT`: listen on PORT (14550 is the ground-station convention; HOST binds one
///   local address, none: every one), as QGroundControl and Mission Planner listen.
/// - `udpout://HOST:PORT`: send to HOST:PORT, from an ephemeral port, the GCS HEARTBEAT once a
///   second that routers such as mavlink-router and MAVProxy's `--out` need before they forward,
///   and read what comes back.
/// - `serial:///dev/ttyUSB0?baud=57600`: a SiK or RFD telemetry radio through termios, 8N1, raw
///   (57600 by default); a device that goes away is opened again with backoff.
public enum MAVLinkEndpoint: Hashable, Sendable, CustomStringConvertible {
    case udpListen(host: String?, port: UInt16)
    case udpOut(host: String, port: UInt16)
    case serial(path: String, baud: Int)

    /// The baud rates termios knows (`cfsetspeed`), as SiK and RFD radios use them.
    public static let baudRates = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600]

    /// Parses a `--mavlink` URL.
    /// - Throws: ``SourceError/open(_:)`` naming what is wrong and the forms that work.
    public init(parsing text: String) throws {
        let forms = "udp://[HOST]:PORT, udpout://HOST:PORT or serial:///dev/ttyUSB0?baud=57600"
        guard let sep = text.range(of: "://") else {
            let meant = text.hasPrefix("udp:") ? " (did you mean udp://:\(text.dropFirst(4).split(separator: ":").last ?? "")?)" : ""
            throw SourceError.open("--mavlink \(text): not a URL\(meant); use \(forms)")
        }
        let scheme = text[..<sep.lowerBound].lowercased(), rest = String(text[sep.upperBound...])
        switch scheme {
        case "udp", "udpin":
            let (host, port) = try Self.hostPort(rest, text, forms)
            self = .udpListen(host: host, port: port)
        case "udpout":
            let (host, port) = try Self.hostPort(rest, text, forms)
            guard let host else { throw SourceError.open("--mavlink \(text): udpout needs the host to send to (udpout://HOST:PORT)") }
            self = .udpOut(host: host, port: port)
        case "serial":
            self = try Self.serial(rest, text)
        default:
            throw SourceError.open("--mavlink \(text): unknown scheme \(scheme)://; use \(forms)")
        }
    }

    private static func hostPort(_ rest: String, _ text: String, _ forms: String) throws -> (String?, UInt16) {
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count > 1 { throw SourceError.open("--mavlink \(text): a UDP endpoint takes no options (?\(parts[1]))") }
        let hostPort = parts[0].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard let colon = hostPort.lastIndex(of: ":"), !hostPort[hostPort.index(after: colon)...].isEmpty else {
            throw SourceError.open("--mavlink \(text): no port (\(forms))")
        }
        guard let port = UInt16(hostPort[hostPort.index(after: colon)...]), port > 0 else {
            throw SourceError.open("--mavlink \(text): the port must be 1-65535")
        }
        let host = String(hostPort[..<colon]).trimmingCharacters(in: ["[", "]"])
        return (host.isEmpty ? nil : host, port)
    }

    private static func serial(_ rest: String, _ text: String) throws -> MAVLinkEndpoint {
        let parts = rest.split(separator: "?", maxSplits: 1)
        let path = parts.first.map(String.init) ?? ""
        guard path.hasPrefix("/") else { throw SourceError.open("--mavlink \(text): a device path, as serial:///dev/ttyUSB0") }
        var baud = 57600
        for item in parts.dropFirst().first?.split(separator: "&") ?? [] where item.hasPrefix("baud=") {
            guard let b = Int(item.dropFirst(5)), baudRates.contains(b) else {
                throw SourceError.open("--mavlink \(text): baud must be one of \(baudRates.map(String.init).joined(separator: ", "))")
            }
            baud = b
        }
        return .serial(path: path, baud: baud)
    }

    /// The URL as the user wrote it, normalized.
    public var description: String {
        switch self {
        case .udpListen(let host, let port): return "udp://\(host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""):\(port)"
        case .udpOut(let host, let port): return "udpout://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        case .serial(let path, let baud): return "serial://\(path)?baud=\(baud)"
        }
    }
}
