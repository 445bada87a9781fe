import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// `--metrics`: the exposition passes promtool, and a real Prometheus server scrapes it.
@Suite(.serialized) struct MetricsEndpointTests {
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") && FileManager.default.isExecutableFile(atPath: "/usr/bin/prometheus")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
    }

    /// Two feeds played slowly (8 s) with metrics on; returns the child and the port.
    static func playing() throws -> (Fixtures.Child, UInt16) {
        let port = try Sender.freeTCPPort()
        let a = Fixtures.capture("default-720p30.h264"), b = Fixtures.capture("default-720p30.h265")
        let child = try Fixtures.start(Fixtures.spyglassBinary, ["play", a, b, "--display", "none", "--fps", "15",
                                                                 "--metrics", "127.0.0.1:\(port)"])
        try #require(Wait.until { Fixtures.tcpPortIsListening(port) }, "the metrics port listens within 10 s")
        return (child, port)
    }

    /// The body at `url`, or nil when it cannot be fetched (yet).
    static func fetch(_ url: String) -> String? {
        guard let (rc, out, _) = try? Fixtures.run("/usr/bin/curl", ["-sf", "--max-time", "5", url]), rc == 0 else { return nil }
        return out
    }

    @Test(.enabled(if: available, "promtool/prometheus/curl missing: run tools/setup (prometheus, curl)"))
    func theExpositionPassesPromtoolAndHasAFeedLabel() throws {
        let (child, port) = try Self.playing()
        defer { child.process.terminate() }
        #expect(Wait.until { (Self.fetch("http://127.0.0.1:\(port)/metrics") ?? "").contains("state=\"live\"} 1") })
        let text = try #require(Self.fetch("http://127.0.0.1:\(port)/metrics"))
        let (rc, out, err) = try Fixtures.run("/usr/bin/promtool", ["check", "metrics"], stdin: Data(text.utf8))
        #expect(rc == 0, "promtool: \(out) \(err)")
        #expect(text.contains("spyglass_frames_decoded_total{feed=\"1 "))
        #expect(text.contains("spyglass_frames_decoded_total{feed=\"2 "))
        #expect(text.contains("spyglass_stage_seconds_bucket{feed=\"1 "))
        #expect(text.contains("spyglass_frame_age_seconds{feed=\"2 "))
    }

    @Test(.enabled(if: available, "promtool/prometheus/curl missing: run tools/setup (prometheus, curl)"))
    func aRealPrometheusScrapesEveryFeed() throws {
        let (child, port) = try Self.playing()
        defer { child.process.terminate() }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("prom-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try """
        global: { scrape_interval: 1s }
        scrape_configs:
          - job_name: spyglass
            static_configs: [{ targets: ["127.0.0.1:\(port)"] }]
        """.write(toFile: "\(dir)/prometheus.yml", atomically: true, encoding: .utf8)
        let web = try Sender.freeTCPPort()
        let prom = try Fixtures.start("/usr/bin/prometheus", ["--config.file=\(dir)/prometheus.yml", "--storage.tsdb.path=\(dir)/data",
                                                              "--web.listen-address=127.0.0.1:\(web)", "--log.level=warn"])
        defer { prom.process.terminate() }
        let query = "http://127.0.0.1:\(web)/api/v1/query?query=spyglass_frames_decoded_total"
        var answer = ""
        let got = Wait.until(timeoutSeconds: 30, pollMillis: 250) {
            answer = Self.fetch(query) ?? ""
            return answer.contains("\"feed\":\"1 ") && answer.contains("\"feed\":\"2 ")
        }
        #expect(got, "PromQL returns one series per feed: \(answer)")
    }

    /// A metrics port in use is one line of ours, not libmicrohttpd's own besides (issue 18).
    @Test func aMetricsPortInUseIsOneLine() throws {
        let (fd, port) = Sender.tcpListener()
        defer { close(fd) }
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-baseline.h264"),
                                                                    "--display", "none", "--metrics", "127.0.0.1:\(port)"])
        #expect(rc == 1)
        let lines = err.split(separator: "\n").filter { $0.localizedCaseInsensitiveContains("bind") || $0.contains("\(port)") }
        #expect(lines.count == 1, "one line about the port: \(err)")
        #expect(lines.first?.contains("--metrics 127.0.0.1:\(port): cannot listen") == true, "\(err)")
    }
}
