import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassTransport
@testable import SpyglassIngest

/// A flood into one feed's port (issue 17, fault 4): datagrams from another socket never reach
/// the feed's parser, framing detector or decoder, and are counted.
@Suite(.serialized) struct FloodIsolationTests {
    /// Random datagrams, seeded: what tools/flood --kind random sends.
    static func garbage(count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix(seed: seed)
        return (0..<count).map { _ in (0..<(12 + Int(rng.next() % 1388))).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
    }

    /// RTP version 2 headers with random payload types and SSRCs, then random bytes: what
    /// tools/flood --kind rtp sends.
    static func rtpGarbage(count: Int, seed: UInt64) -> [[UInt8]] {
        var rng = SplitMix(seed: seed)
        return (0..<count).map { _ in
            RTPPacket.build(marker: rng.next() & 1 == 1, payloadType: UInt8(rng.next() % 128), sequenceNumber: UInt16(truncatingIfNeeded: rng.next()),
                            timestamp: UInt32(truncatingIfNeeded: rng.next()), ssrc: UInt32(truncatingIfNeeded: rng.next()),
                            payload: (0..<Int(rng.next() % 1200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }

    /// A raw Annex B stream, each datagram followed by 2 garbage datagrams from another socket
    /// on the same port (random bytes, and RTP headers with random payload types and SSRCs):
    /// every picture comes out bit-exact (none of the garbage was spliced into a NAL unit),
    /// nothing restarts, and every flood datagram is counted as dropped.
    @Test @MainActor func aFloodFromAnotherSocketNeverReachesTheStream() throws {
        let path = Fixtures.capture("test/h264-aud.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let datagrams = Sender.accessUnits(of: try Fixtures.bytes(path)).flatMap { au in
            stride(from: 0, to: au.count, by: 1200).map { Array(au[$0..<min(au.count, $0 + 1200)]) }
        }
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let port = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
        h.start()
        let flood = Sender.newUDPSocket()
        defer { close(flood) }
        var sent = 0
        for (i, d) in datagrams.enumerated() {
            Sender.udp(port: port, datagrams: [d])
            let g = Self.garbage(count: 1, seed: UInt64(i)) + Self.rtpGarbage(count: 1, seed: UInt64(i))
            Sender.udp(port: port, datagrams: g, via: flood)
            sent += g.count
            if i % 32 == 31 { Sender.pace(micros: 1000) }   // loopback has no pacing: let the receiver keep up
        }
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.otherSenderDatagrams == sent, "every flood datagram dropped and counted")
        #expect(r.summary.resets == 0 && r.summary.junkBytes == 0 && r.summary.notRTP == 0)
        #expect(r.summary.line.contains("\(sent) datagrams from another sender dropped"), "\(r.summary.line)")
        #expect(LinkStatistics.lines(r.summary).contains { $0.contains("\(sent) from another sender") }, "the s overlay says so")
    }

    /// The latch on a manual clock: the established sender keeps the port while it sends; another
    /// takes over at its first datagram once the first has been silent for 100 ms, and the first
    /// takes it back at once when it sends again (a stalled sender is not locked out by a flood).
    @Test func anotherSenderTakesOverOnlyOnceTheFirstIsSilent() {
        var latch = SenderLatch<Int>()
        let silence = SenderLatch<Int>.takeoverSilenceMicros
        let verdicts = [latch.admit(1, nowMicros: 1_000), latch.admit(2, nowMicros: 2_000), latch.admit(1, nowMicros: 3_000),
                        latch.admit(2, nowMicros: 3_000 + silence - 1), latch.admit(2, nowMicros: 3_000 + silence),
                        latch.admit(3, nowMicros: 3_000 + silence + 10), latch.admit(1, nowMicros: 3_000 + silence + 20),
                        latch.admit(2, nowMicros: 3_000 + silence + 30)]
        // The first sender; the second while the first sends; the first again; the second 1 µs
        // short of 100 ms of silence; at 100 ms it takes over; a third is refused; the first
        // takes the port back at once; the second is refused again.
        #expect(verdicts == [true, false, true, false, true, false, true, false])
        #expect((latch.refused, latch.takeovers) == (4, 2))
    }

    /// Two different sockets are two senders; the same socket is one (IPv4 address and port).
    @Test func peersCompareByAddressAndPort() {
        func peer(_ port: UInt16, _ address: String) -> UDPPeer {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr.s_addr = inet_addr(address)
            return withUnsafePointer(to: &sin) { UDPPeer(UnsafeRawPointer($0)) }
        }
        #expect(peer(5000, "127.0.0.1") == peer(5000, "127.0.0.1"))
        #expect(peer(5000, "127.0.0.1") != peer(5001, "127.0.0.1"))
        #expect(peer(5000, "127.0.0.1") != peer(5000, "127.0.0.2"))
    }
}

/// A small seeded generator (SplitMix64), so the garbage is the same on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
