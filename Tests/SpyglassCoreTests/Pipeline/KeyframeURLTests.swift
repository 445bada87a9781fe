import Foundation
import Testing
@testable import SpyglassBitstream
@testable import SpyglassFeed
@testable import SpyglassDisplay

/// `--keyframe-url URL` (issue 19): on a link with no way back for RTCP, a join before any
/// keyframe asks the camera for one with an HTTP GET, answered here by Python's own
/// `http.server`, which logs each request it gets.
@Suite struct KeyframeURLTests {
    /// Python's `http.server` on a port the kernel chooses: the child and the port it says.
    static func httpServer() throws -> (Fixtures.Child, UInt16) {
        let child = try Fixtures.start("/usr/bin/python3", ["-u", "-c", """
            import http.server, sys
            s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
            print("port", s.server_port, file=sys.stderr, flush=True)
            s.serve_forever()
            """])
        var port: UInt16?
        _ = Wait.until(timeoutSeconds: 30) {
            let err = (try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? ""
            port = err.split(separator: "\n").first { $0.hasPrefix("port ") }.flatMap { UInt16($0.dropFirst(5)) }
            return port != nil || !child.process.isRunning
        }
        return (child, try #require(port, "the HTTP server says its port"))
    }

    @MainActor @Test func aJoinBeforeAnyKeyframeAsksTheCameraOverHTTP() throws {
        let (server, port) = try Self.httpServer()
        defer { server.process.terminate() }
        let r = try Harness.decodeFile(try JoinShowTests.joinedStream()) { $0.keyframeURL = "http://127.0.0.1:\(port)/request/idr" }
        #expect(r.hashes.isEmpty, "no keyframe came: nothing shown")
        #expect(r.summary.keyframeRequestsJoin >= 1, "\(r.summary.line)")
        #expect(LinkStatistics.lines(r.summary).contains { $0.contains("keyframe request") && $0.contains("join") }, "the s overlay counts them by reason")
        let asked = Wait.until(timeoutSeconds: 30) {
            ((try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? "").contains("\"GET /request/idr HTTP/1.1\"")
        }
        #expect(asked, "the camera got the GET: \((try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? "")")
    }

    /// Only http(s) URLs are taken (a `file:///dev/zero` read forever, found by a bad-input run),
    /// and credentials never reach the log.
    @Test func onlyHTTPIsAskedAndCredentialsAreNotShown() {
        #expect(KeyframeURL.problem(with: "http://cam/request/idr") == nil)
        #expect(KeyframeURL.problem(with: "HTTPS://cam:8443/request/idr") == nil)
        for bad in ["file:///dev/zero", "ftp://cam/x", "notaurl", "", "http://", "http:///x", "http://user@/x", "http://cam/a b", "http://" + String(repeating: "x", count: 3000)] {
            #expect(KeyframeURL.problem(with: bad) != nil, "\(bad.prefix(40))")
        }
        #expect(KeyframeURL.shown("http://admin:s3cr%40t@cam/request/idr") == "http://…@cam/request/idr")
        #expect(KeyframeURL.shown("http://cam/request/idr?a=b@c") == "http://cam/request/idr?a=b@c", "an @ after the path is no credential")
        #expect(KeyframeURL.shown("http://" + String(repeating: "x", count: 300)).count == 120)
    }

    @Test func aCleanStreamAsksNothing() throws {
        let (server, port) = try Self.httpServer()
        defer { server.process.terminate() }
        let r = try Harness.decodeFile(Fixtures.capture("test/h264-baseline.h264")) { $0.keyframeURL = "http://127.0.0.1:\(port)/request/idr" }
        #expect(!r.hashes.isEmpty)
        #expect(r.summary.keyframeRequestsJoin + r.summary.keyframeRequestsLoss + r.summary.keyframeRequestsCut == 0, "\(r.summary.line)")
    }
}
