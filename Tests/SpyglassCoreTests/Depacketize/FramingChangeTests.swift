import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// A sender that restarts with another framing on the same port is followed, not dropped as
/// "not RTP" for ever.
@Suite struct FramingChangeTests {
    /// ffmpeg sends RTP, then the same port gets a raw Annex B stream from ffmpeg's UDP muxer:
    /// every picture of both parts comes out, bit-exact.
    @Test func rtpThenRawAnnexBOnTheSamePort() throws {
        let a = Fixtures.capture("test/h264-baseline.h264"), b = Fixtures.capture("test/h264-aud.h264")
        let expectedA = try Fixtures.ffmpegFrameMD5(a), expectedB = try Fixtures.ffmpegFrameMD5(b)
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: expectedA.count + expectedB.count, idleFlushMicros: 1_000)
        o.timeoutSeconds = 5
        let h = Harness(source: udp, options: o)
        h.start()
        let ffmpeg = "/usr/bin/ffmpeg"
        let (rc1, _, e1) = try Fixtures.run(ffmpeg, ["-v", "error", "-re", "-i", a, "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)"])
        #expect(rc1 == 0, "\(e1)")
        #expect(h.waitForFrames(expectedA.count), "the RTP part came out")
        let (rc2, _, e2) = try Fixtures.run(ffmpeg, ["-v", "error", "-re", "-i", b, "-c", "copy", "-f", "h264", "udp://127.0.0.1:\(port)?pkt_size=1200"])
        #expect(rc2 == 0, "\(e2)")
        let r = h.finish()
        #expect(r.hashes == expectedA + expectedB)
        #expect(r.summary.resets >= 1, "the framing change restarted the feed")
        #expect(!r.summary.rtp, "the feed ended on raw Annex B")
    }
}

/// The framing detector under a flood from the stream's own source (issue 17, fault 4: the
/// flooded feed flipped between Annex B and RTP 43 times in 30 s): garbage never changes the
/// framing; a real change still does, once, and is counted.
@Suite struct FramingHysteresisTests {
    /// RTP packets of a file, one datagram each, in order.
    static func rtp(_ name: String) throws -> [[UInt8]] {
        try RTPIngestTests.rtpPackets(Fixtures.capture(name), codec: .h264).flatMap { $0 }
    }

    /// The same file as raw Annex B datagrams of at most 1200 bytes, one access unit after another.
    static func raw(_ name: String) throws -> [[UInt8]] {
        Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture(name))).flatMap { au in
            stride(from: 0, to: au.count, by: 1200).map { Array(au[$0..<min(au.count, $0 + 1200)]) }
        }
    }

    /// Pushes datagrams 1 ms apart; returns the NAL units out, the restarts and the counts.
    static func push(_ datagrams: [[UInt8]]) -> (units: [[UInt8]], restarts: Int, framing: Framing?, counts: [Metric: Int]) {
        var d = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 0)
        var units: [[UInt8]] = [], restarts = 0
        for (i, bytes) in datagrams.enumerated() {
            bytes.withUnsafeBytes { b in
                d.push(b, arrivalMicros: 1_000_000 + UInt64(i) * 1_000, truncated: false) { e in
                    if case .unit(let u) = e { units.append(u.bytes) }
                    if case .restart = e { restarts += 1 }
                }
            }
        }
        return (units, restarts, d.framing, d.counts)
    }

    /// Each RTP packet followed by 4 garbage datagrams (random bytes, and RTP headers with
    /// random payload types and SSRCs): no restart, the framing stays RTP, and the stream's NAL
    /// units come out as without the garbage.
    @Test func garbageFromTheStreamsOwnSourceNeverFlipsTheFraming() throws {
        let clean = try Self.rtp("test/h264-aud.h264")
        var flooded: [[UInt8]] = []
        for (i, p) in clean.enumerated() {
            flooded.append(p)
            flooded += FloodIsolationTests.garbage(count: 2, seed: UInt64(i)) + FloodIsolationTests.rtpGarbage(count: 2, seed: UInt64(i) + 1 << 32)
        }
        let a = Self.push(clean), b = Self.push(flooded)
        #expect(b.restarts == 0, "garbage flipped the framing \(b.restarts) times")
        #expect(b.framing == .rtp && b.counts[.framingChanges] == 0)
        #expect(b.counts[.garbageRuns, default: 0] >= 1, "the garbage runs are counted")
        #expect(b.units == a.units, "the stream is untouched")
    }

    /// RTP, then the same port carries raw Annex B: one change, counted, and the raw part's
    /// units come out whole (its first datagrams replayed into the new framing).
    @Test func aRealFramingChangeIsFollowedOnceAndCounted() throws {
        let rtp = try Self.rtp("test/h264-aud.h264"), raw = try Self.raw("test/h264-aud.h264")
        let r = Self.push(rtp + raw)
        let rtpOnly = Self.push(rtp), rawOnly = Self.push(raw)
        #expect(r.restarts == 1 && r.counts[.framingChanges] == 1)
        #expect(r.framing == .annexB)
        #expect(r.units.count == rtpOnly.units.count + rawOnly.units.count, "no unit of either part lost")
    }

    /// The evidence rules on their own: 30 garbage datagrams show no framing; a real stream's
    /// 30 show its own.
    @Test func garbageShowsNoFramingAndAStreamShowsItsOwn() throws {
        let garbage = FloodIsolationTests.garbage(count: 15, seed: 7) + FloodIsolationTests.rtpGarbage(count: 15, seed: 8)
        for f in DepacketizerRegistry.formats { #expect(!FramingEvidence.shows(f.framing, in: garbage), "\(f.framing)") }
        #expect(FramingEvidence.shows(.rtp, in: Array(try Self.rtp("test/h264-aud.h264").prefix(30))))
        #expect(FramingEvidence.shows(.annexB, in: Array(try Self.raw("test/h264-aud.h264").prefix(30))))
    }
}
