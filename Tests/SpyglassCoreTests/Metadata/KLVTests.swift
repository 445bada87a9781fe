import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport
@testable import SpyglassTransport

/// KLV metadata (SMPTE ST 336, MISB ST 0601) in MPEG-TS: the Precision Time Stamp is the
/// capture time, the position is shown by `probe`, bad KLV is a counted drop.
@Suite struct KLVTests {
    static let position = PlatformMetadata(headingDegrees: 90, latitudeDegrees: 47.3977, longitudeDegrees: 8.5456, altitudeMeters: 500)

    @Test func aLocalSetRoundTripsWithinItsQuantization() throws {
        var m = Self.position
        m.precisionTimeMicros = 1_764_600_000_123_456
        let bytes = UASLocalSet.encode(m)
        let (packets, wellFormed) = KLV.packets(bytes[...])
        #expect(wellFormed && packets.count == 1)
        let d = try #require(UASLocalSet.decode(packets[0]))
        #expect(d.precisionTimeMicros == m.precisionTimeMicros)
        #expect(abs(d.latitudeDegrees! - 47.3977) < 1e-7 && abs(d.longitudeDegrees! - 8.5456) < 1e-7)
        #expect(abs(d.altitudeMeters! - 500) < 0.31 && abs(d.headingDegrees! - 90) < 0.006)
        #expect(d.positionText == "47.397700, 8.545600, 500 m, heading 90.0°")
        var corrupt = bytes
        corrupt[20] ^= 0x01
        #expect(UASLocalSet.decode(KLV.packets(corrupt[...]).packets[0]) == nil, "a wrong checksum (tag 1) is refused")
    }

    @Test func badBERLengthsAreDropsNeverCrashes() {
        #expect(KLV.berLength([0x85, 1, 2, 3, 4, 5][...], at: 0) == nil, "longer than 4 bytes")
        #expect(KLV.berLength([0x82, 1][...], at: 0) == nil, "runs past the end")
        #expect(KLV.berLength([0x82, 1, 0][...], at: 0)! == (256, 3))
        let set = UASLocalSet.encode(Self.position)
        #expect(!KLV.packets((set + UASLocalSet.key + [0x84, 0x7F, 0xFF, 0xFF, 0xFF])[...]).wellFormed)
        var rng = SeededRandom(seed: 601)
        var pes = MetadataPES(synchronous: false)
        for _ in 0..<20_000 {
            var d = set
            for _ in 0..<Int.random(in: 1...4, using: &rng) { d[Int.random(in: 0..<d.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            let (packets, _) = KLV.packets(d[...])
            for p in packets { _ = UASLocalSet.decode(p) }
            _ = MetadataPES.cellData(d[...])
            _ = pes.push(([0, 0, 1, 0xBD, 0, 0, 0x80, 0, 0] + d)[...], start: true)
        }
        var big = MetadataPES(synchronous: false)
        _ = big.push(([0, 0, 1, 0xBD, 0, 0, 0x80, 0, 0] + [UInt8](repeating: 0, count: 100))[...], start: true)
        for _ in 0..<400 { _ = big.push([UInt8](repeating: 0, count: 184)[...], start: false) }
        #expect(big.malformed == 1, "a PES over 64 KiB is dropped and counted, not kept growing")
    }

    /// The capture's access units muxed by our MPEG-TS muxer with a KLV stream (asynchronous:
    /// stream_type 0x06 with a KLVA registration; synchronous: 0x15 with a KLVA metadata
    /// descriptor and AU cells), one local set per picture with its PTS: ffprobe sees a KLV
    /// stream; we play every picture bit-exact, each with its KLV time stamp as the capture time.
    static func klvTransportStream(_ carriage: MPEGTSMuxer.KLVCarriage = .asynchronous) throws -> (path: String, stamps: [UInt64]) {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("default-720p30.h264")))
        var muxer = MPEGTSMuxer(codec: .h264, klv: carriage)
        var ts: [UInt8] = []
        var stamps: [UInt64] = []
        for (i, au) in aus.enumerated() {
            var m = Self.position
            m.precisionTimeMicros = 1_764_600_000_000_000 + UInt64(i) * 33_367
            stamps.append(m.precisionTimeMicros!)
            let key = i % 60 == 0
            ts += muxer.mux(au, pts90kHz: UInt64(i) * 3003, keyframe: key, nowMicros: UInt64(i) * 33_367, klv: UASLocalSet.encode(m))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("klv-\(getpid())-\(UUID().uuidString).ts").path
        try Data(ts).write(to: URL(fileURLWithPath: path))
        return (path, stamps)
    }

    @MainActor @Test(arguments: [MPEGTSMuxer.KLVCarriage.asynchronous, .synchronous])
    func thePrecisionTimeStampIsTheCaptureTime(carriage: MPEGTSMuxer.KLVCarriage) throws {
        let (ts, stamps) = try Self.klvTransportStream(carriage)
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", ts])
        #expect(rc == 0 && Set(out.split(separator: "\n")) == ["h264", "klv"], "ffprobe: \(out) \(err)")
        let r = try Harness.decodeFile(ts)
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(Fixtures.capture("default-720p30.h264"))))
        #expect(r.timings.count == stamps.count)
        for (t, au) in zip(r.timings, r.presentedAccessUnits) {
            #expect(t.captureSource == .klv && t.captureWallMicros == stamps[au], "access unit \(au)")
        }
        #expect(r.summary.tsContinuityErrors == 0)
        #expect(LinkStatistics.lines(r.summary).contains("platform (KLV): 47.397700, 8.545600, 500 m, heading 90.0°"), "the overlay")
    }

    @Test func probeShowsThePlatformPosition() throws {
        let (ts, stamps) = try Self.klvTransportStream()
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", ts])
        #expect(rc == 0, "\(err)")
        #expect(out.contains("KLV (MISB ST 0601)    \(stamps.count) local sets; platform 47.397700, 8.545600, 500 m, heading 90.0°"), "\(out)")
        #expect(out.contains("KLV Precision Time Stamp (ST 0601 tag 2) in \(stamps.count) access units"), "\(out)")
    }
}

/// `spyglass send --mpegts --klv` to `spyglass play` over UDP: the latency log says `klv`.
@Suite(.serialized) struct KLVLiveTests {
    @Test func aLiveSTANAG4609FeedLogsKLVCaptureTimes() throws {
        let port = try Sender.freeUDPPort()
        let csv = FileManager.default.temporaryDirectory.appendingPathComponent("klv-\(getpid()).csv").path
        let play = try Fixtures.start(Fixtures.spyglassBinary, ["play", "udp://127.0.0.1:\(port)", "--display", "none",
                                                                "--frames", "60", "--timeout", "5", "--latency-log", csv])
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "the receiver listens")
        // A file (no SEI of its own, none added): the KLV time stamp is the only capture time.
        let send = try Fixtures.start(Fixtures.spyglassBinary, ["send", Fixtures.capture("default-720p30.h264"), "udp://127.0.0.1:\(port)",
                                                                "--mpegts", "--klv", "47.3977,8.5456,500,90", "--loop", "--duration", "10"])
        defer { send.process.terminate() }
        let (rc, err) = play.wait(timeoutSeconds: 30)
        #expect(rc == 0, "\(err)")
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        let header = rows[0].split(separator: ",", omittingEmptySubsequences: false)
        let source = try #require(header.firstIndex(of: "capture_source")), g2g = try #require(header.firstIndex(of: "glass_to_glass_ms"))
        let fields = rows.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(fields.count >= 59 && fields.allSatisfy { $0[source] == "klv" && !$0[g2g].isEmpty }, "\(rows.prefix(3))")
    }
}
