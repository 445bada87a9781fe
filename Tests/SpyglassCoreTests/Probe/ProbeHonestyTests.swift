import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// A live probe never answers with confidence when it has seen nothing.
@Suite struct ProbeHonestyTests {
    @Test func aSilentPortSaysNothingArrived() throws {
        let port = try Sender.freeUDPPort()
        let (_, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", "udp://127.0.0.1:\(port)", "--duration", "0.5"])
        #expect(out.contains("nothing: 0 datagrams"), "\(out)")
        #expect(!out.contains("0x0"), "no picture format is made up")
    }

    @Test func dataWithoutParameterSetsSaysSoAndWhatArrived() {
        var probe = StreamProbe()
        var s = FeedSummary()
        s.datagrams = 12
        s.bytes = 9000
        s.durationSeconds = 5
        s.isDatagramSource = true
        probe.finish(summary: s, live: true, datagramSizes: Array(repeating: 750, count: 12))
        #expect(probe.text.contains("12 datagrams, 9000 bytes in 5.0 s"), "\(probe.text)")
        #expect(probe.text.contains("none seen (no SPS/PPS)"))
        #expect(!probe.text.contains("0x0"))
    }

    /// A byte stream (TCP, RTSP interleaved, SRT, a pipe) counts reads, and says so: a read is
    /// no datagram.
    @Test func aByteStreamCountsReadsNotDatagrams() {
        var probe = StreamProbe()
        var s = FeedSummary()
        s.datagrams = 40
        s.bytes = 52_000
        s.durationSeconds = 2
        s.isDatagramSource = false
        probe.finish(summary: s, live: true, datagramSizes: Array(repeating: 1300, count: 40))
        #expect(probe.text.contains("40 reads, 52000 bytes in 2.0 s"), "\(probe.text)")
        #expect(!probe.text.contains("datagrams"), "\(probe.text)")
    }

    /// The datagrams line names what carried the video: MPEG-TS is never called raw Annex B.
    @Test func aLiveMPEGTSProbeSaysMPEGTS() throws {
        let port = try Sender.freeUDPPort()
        let sender = try Fixtures.start(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)", "--mpegts",
                                                                 "--size", "320x240", "--duration", "30"])
        defer { sender.process.terminate(); _ = sender.wait() }
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", "udp://127.0.0.1:\(port)", "--duration", "2"])
        #expect(rc == 0, "\(err)")
        let line = out.split(separator: "\n").first { $0.hasPrefix("datagrams") }.map(String.init) ?? ""
        #expect(line.hasSuffix(", MPEG-TS"), "\(out)")
    }

    /// A pipe on stdin that never ends (a camera tool, ffmpeg writing `-`) is probed for
    /// `--duration`, as a socket is, not read until an end that never comes.
    @Test func aNeverEndingPipeIsProbedForItsDuration() throws {
        let clip = Fixtures.capture("test/h264-aud.h264")
        // The writer keeps the pipe open, writing zero bytes (legal trailing zeros) until the reader has gone.
        let writer = "(cat '\(clip)'; while :; do sleep 0.2; printf '\\0\\0\\0\\0' || exit 0; done)"
        let (rc, out, err) = try Fixtures.run("/bin/sh", ["-c", "\(writer) | '\(Fixtures.spyglassBinary)' probe - --duration 1"],
                                              timeoutSeconds: 120)
        #expect(rc == 0, "\(err)")
        #expect(err.contains("reading stdin for 1.0 s"), "\(err)")
        #expect(out.contains("H.264"), "\(out)")
    }
}
