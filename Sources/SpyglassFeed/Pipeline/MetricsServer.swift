import CMicroHTTPD
#if canImport(Glibc)
import Glibc
import SpyglassIngest
#endif

/// Serves `GET /metrics` (Prometheus text exposition) over HTTP with libmicrohttpd, on its own
/// thread. Anything else is 404.
public final class MetricsServer: Sendable {
    /// Makes the exposition text (any thread).
    public typealias Provider = @Sendable () -> String
    private final class Box: Sendable {
        let provider: Provider
        init(_ p: @escaping Provider) { provider = p }
    }
    private let box: Box
    /// libmicrohttpd's daemon; after start only `MHD_stop_daemon` touches it, which the library
    /// allows from any thread.
    private nonisolated(unsafe) let daemon: OpaquePointer
    /// The port it listens on.
    public let port: UInt16

    /// Starts listening.
    /// - Parameters:
    ///   - address: IPv4 address to bind (default all interfaces).
    ///   - port: TCP port (0: any free one; see ``port``).
    ///   - provider: the text to serve.
    /// - Throws: ``SourceError/open(_:)`` when the port cannot be bound.
    public init(address: String = "0.0.0.0", port: UInt16, provider: @escaping Provider) throws {
        box = Box(provider)
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &sa.sin_addr) == 1 else { throw SourceError.open("--metrics: '\(address)' is not an IPv4 address") }
        let handler: spy_mhd_handler = { cls, connection, url, method, _, _, _, _ in
            let box = Unmanaged<Box>.fromOpaque(cls!).takeUnretainedValue()
            let path = url.map { String(cString: $0) } ?? ""
            let get = method.map { String(cString: $0) } == "GET"
            let ok = get && (path == "/metrics" || path == "/")
            let body = Array((ok ? box.provider() : "not found: try /metrics\n").utf8)
            let response = body.withUnsafeBytes { spy_mhd_response_copy(body.count, $0.baseAddress) }
            MHD_add_response_header(response, "Content-Type", ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain")
            let rc = MHD_queue_response(connection, UInt32(ok ? 200 : 404), response)
            MHD_destroy_response(response)
            return rc
        }
        let context = Unmanaged.passUnretained(box).toOpaque()
        guard let d = withUnsafePointer(to: &sa, { spy_mhd_start($0, handler, context) }) else {
            throw SourceError.open("--metrics \(address):\(port): cannot listen (\(errnoText()))")
        }
        daemon = d
        self.port = spy_mhd_port(d)
    }

    /// Stops serving.
    public func stop() { MHD_stop_daemon(daemon) }
}
