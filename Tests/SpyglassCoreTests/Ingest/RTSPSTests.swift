import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassIngest

/// RTSP over TLS (`rtsps://`, RFC 7826 §19.2) from GStreamer's RTSP server with a certificate
/// (tools/rtsp-server --tls-cert; glib-networking's GnuTLS on the server's side, OpenSSL on
/// ours), certificates made by tools/tls-certs: every picture bit-exact with what the server's
/// encoder wrote, interleaved inside the TLS connection; each certificate problem named.
@Suite(.serialized) struct RTSPSTests {
    static var available: Bool {
        RTSPTests.available && FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/gio/modules/libgiognutls.so")
    }

    /// tools/tls-certs' files, made once; the test CA becomes the trust store (`SSL_CERT_FILE`,
    /// which OpenSSL's default verify paths read): no test here relies on the system's own.
    static let certificates: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("spyglass-tls-\(getpid())").path
        let r = try? Fixtures.run("/usr/bin/python3", [Fixtures.root.appendingPathComponent("tools/tls-certs").path, dir])
        precondition(r?.0 == 0, "tools/tls-certs failed: \(r?.2 ?? "not started")")
        setenv("SSL_CERT_FILE", dir + "/ca.pem", 1)
        return dir
    }()

    /// A TLS server with `certificate` (a file of tools/tls-certs) serving 45 pictures.
    static func server(_ certificate: String, ref: String? = nil) throws -> (Fixtures.Child, UInt16) {
        try RTSPTests.startServer(["--frames", "45", "--tls-cert", certificates + "/" + certificate] + (ref.map { ["--ref", $0] } ?? []))
    }

    /// The error that opening `url` throws (nil: it opened).
    static func openingError(_ url: String) -> String? {
        do { _ = try RTSPSource(url: try RTSPURL(parsing: url), transport: .auto); return nil } catch { return "\(error)" }
    }

    @Test(.enabled(if: available, "gst-rtsp-server or glib-networking missing: run tools/setup"),
          arguments: [("self-signed.pem", "rtsps://127.0.0.1:PORT/test?insecure"), ("good.pem", "rtsps://127.0.0.1:PORT/test"),
                      ("good.pem", "rtsps://localhost:PORT/test")])
    func everyPictureComesThroughTLS(certificate: String, url: String) throws {
        let ref = RTSPTests.refPath()
        let (server, port) = try Self.server(certificate, ref: ref)
        defer { server.process.terminate() }
        let r = try RTSPTests.play(url.replacingOccurrences(of: "PORT", with: "\(port)"), transport: .auto)
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        try #require(expected.count > 30)
        #expect(r.hashes == expected, "\(certificate) at \(url)")
        #expect(r.summary.rtp && r.summary.datagramsLost == 0, "\(r.summary.line)")
    }

    @Test(.enabled(if: available, "gst-rtsp-server or glib-networking missing: run tools/setup"),
          arguments: [("self-signed.pem", "127.0.0.1", "is self-signed"), ("expired.pem", "127.0.0.1", "has expired"),
                      ("wrong-name.pem", "127.0.0.1", "is for another IP address"),
                      ("wrong-name.pem", "localhost", "is for another host name")])
    func aCertificateProblemIsNamedAndInsecureAcceptsIt(certificate: String, host: String, problem: String) throws {
        let (server, port) = try Self.server(certificate)
        defer { server.process.terminate() }
        let refused = Self.openingError("rtsps://\(host):\(port)/test")
        #expect(refused?.contains("the server's certificate \(problem)") == true, "\(refused ?? "opened")")
        #expect(refused?.contains("?insecure") == true, "the way out is named: \(refused ?? "opened")")
        #expect(Self.openingError("rtsps://\(host):\(port)/test?insecure") == nil, "?insecure accepts the \(certificate) certificate")
    }

    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"))
    func aServerWithoutTLSIsNamedAsAProtocolError() throws {
        let (server, port) = try RTSPTests.startServer(["--frames", "45"])
        defer { server.process.terminate() }
        let refused = Self.openingError("rtsps://127.0.0.1:\(port)/test")
        #expect(refused?.contains("TLS handshake failed") == true && refused?.contains("try rtsp://") == true, "\(refused ?? "opened")")
    }

    @Test(.enabled(if: available, "gst-rtsp-server or glib-networking missing: run tools/setup"))
    func aPlainRequestToATLSServerSuggestsRTSPS() throws {
        let (server, port) = try Self.server("good.pem")
        defer { server.process.terminate() }
        let refused = Self.openingError("rtsp://127.0.0.1:\(port)/test")
        #expect(refused?.contains("try rtsps://") == true, "\(refused ?? "opened")")
    }

    @Test func urlsTakeOutInsecureAndDefaultTo322() throws {
        let u = try RTSPURL(parsing: "rtsps://admin:pw@192.168.1.1/proxy?enableSrtp&insecure")
        #expect(u.port == 322 && u.security == .tls(checkCertificate: false))
        #expect(u.requestURL == "rtsps://192.168.1.1/proxy?enableSrtp", "the camera's own query stays; ours goes")
        let v = try RTSPURL(parsing: "rtsps://cam.local:7441/abc")
        #expect(v.port == 7441 && v.security == .tls(checkCertificate: true) && v.requestURL == "rtsps://cam.local:7441/abc")
        let w = try RTSPURL(parsing: "rtsp://cam/live?insecure=1")
        #expect(w.security == .none && w.requestURL == "rtsp://cam/live")
        guard case .rtsp(let x) = try SourceURL(parsing: "rtsps://cam/live") else { Issue.record("rtsps:// is RTSP"); return }
        #expect(x.security == .tls(checkCertificate: true))
        // `track=`, `program=` and `pid=` are ours too; the camera's own items stay, in order.
        let y = try SourceURL(parsing: "rtsp://cam/live?channel=1&track=2&subtype=0&pid=256")
        guard case .rtsp(let z) = y.transport else { Issue.record("rtsp:// is RTSP"); return }
        #expect(z.track == "2" && z.requestURL == "rtsp://cam/live?channel=1&subtype=0" && y.mpegtsSelection?.pid == 256)
    }
}
