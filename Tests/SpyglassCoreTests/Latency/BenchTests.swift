import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// `spyglass bench --duration 2 --display none` writes a CSV whose stages are present,
/// non-negative, and add up to glass-to-glass.
@Suite struct BenchTests {
    /// `--loss` on RTP, and on RTSP through GStreamer's server (which passes the requests on to the
    /// sender, `tools/rtsp-server --relay-rtcp auto`): the sender drops datagrams, the receiver
    /// asks for keyframes, and bench says how often and how fast the picture came clean again;
    /// with requests off it asks none, and is clean again only at the sender's periodic IDRs.
    @Test(arguments: ["rtp", "rtsp"])
    func benchWithLossReportsTheRecovery(transport: String) throws {
        if transport == "rtsp" && !RTSPTests.available { return }
        var lines: [String: String] = [:]
        for requests in ["on", "off"] {
            let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary,
                ["bench", "--transport", transport, "--loss", "0.01", "--keyframe-requests", requests, "--duration", "4",
                 "--size", "320x240", "--display", "none", "--plot", "none", "--latency-log", "/dev/null"])
            try #require(rc == 0 || rc == 3, "bench ran: \(err)")
            lines[requests] = out.split(separator: "\n").first { $0.hasPrefix("loss: ") }.map(String.init)
        }
        let on = try #require(lines["on"], "a loss line"), off = try #require(lines["off"], "a loss line")
        #expect(!on.contains(" 0 packets lost") && !on.contains("; 0 keyframe requests"), "\(on)")
        #expect(on.contains("recovery p50"), "\(on)")
        #expect(off.contains("; 0 keyframe requests"), "\(off)")
        // "clean again N time(s)": answered requests make many more than the IDRs every 2 s of 4 s.
        func times(_ line: String) -> Int { Int(line.components(separatedBy: "clean again ").last?.split(separator: " ").first ?? "") ?? 0 }
        #expect(times(on) > times(off) + 2, "\(transport): \(on) | \(off)")
    }

    @Test func benchCSVStagesSumToTheTotal() throws {
        let csv = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(getpid()).csv").path
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary,
            ["bench", "--duration", "2", "--display", "none", "--size", "640x360", "--latency-log", csv, "--plot", "none"])
        #expect(rc == 0 || rc == 3, "bench ran (\(rc)): \(err)")
        #expect(out.contains("glass-to-glass"), "\(out)")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let stageColumns = ["sender_network_ms", "assembly_ms", "decode_ms", "reorder_ms", "queue_ms", "render_ms"]
        for c in stageColumns + ["glass_to_glass_ms", "receiver_added_ms"] { #expect(header.contains(c), "\(c)") }
        var checked = 0
        for line in lines.dropFirst() {
            let cols = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let row = Dictionary(uniqueKeysWithValues: zip(header, cols))
            guard row["dropped"] == "0" else { continue }
            let stages = stageColumns.map { Double(row[$0] ?? "") }
            #expect(!stages.contains(nil), "every stage present: \(line)")
            let values = stages.compactMap { $0 }
            for v in values { #expect(v >= 0, "\(line)") }
            let total = try #require(Double(row["glass_to_glass_ms"] ?? ""), "\(line)")
            #expect(abs(values.reduce(0, +) - total) <= 0.01, "\(line)")
            let added = try #require(Double(row["receiver_added_ms"] ?? ""))
            #expect(abs(values.dropFirst().reduce(0, +) - added) <= 0.01)
            checked += 1
        }
        #expect(checked > 0, "pictures shown in 2 s of the pattern")
    }

    /// The transports that need a real server or library in between: SRT through libsrt, RTSP
    /// through GStreamer's RTSP server (UDP and TCP). Each run decodes the pattern cleanly and
    /// reports what the receiver added.
    @Test(.enabled(if: RTSPTests.available, "gst-rtsp-server is not installed: run tools/setup"),
          arguments: [["srt"], ["rtsp", "--rtsp-transport", "udp"], ["rtsp", "--rtsp-transport", "tcp"]])
    func benchRunsThroughSRTAndAnRTSPServer(transport: [String]) throws {
        let csv = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(getpid())-\(transport.joined()).csv").path
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary,
            ["bench", "--duration", "3", "--display", "none", "--size", "640x360", "--keyint", "15", "--latency-log", csv,
             "--plot", "none", "--transport"] + transport, timeoutSeconds: 120)
        #expect(rc == 0 || rc == 3, "bench ran (\(rc)): \(err)")
        #expect(out.contains("receiver-added"), "\(out)")
        let frames = out.split(separator: "\n").first { $0.hasPrefix("frames: ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        #expect(frames > 0, "pictures decoded over \(transport): \(out)")
        #expect(out.contains("; 0 decode errors"), "\(out)")
    }
}
