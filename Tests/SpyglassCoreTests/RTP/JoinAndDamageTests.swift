import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassTransport
@testable import SpyglassIngest

/// Joining late, parameter sets that came before us, bursts, and broken tails.
///
/// Serialized: live receivers on loopback; one test fills a socket buffer in one burst.
@Suite(.serialized) struct JoinAndDamageTests {
    private func units(of au: [UInt8]) -> [[UInt8]] {
        var s = AnnexBScanner()
        var out: [[UInt8]] = []
        s.push(au, arrivalMicros: 0) { out.append($0.bytes) }
        s.flush(atMicros: 0, reason: .endOfStream) { out.append($0.bytes) }
        return out
    }

    @Test func hevcOpenGOPJoinedAtACRADropsItsRASLPictures() throws {
        let path = Fixtures.capture("test/h265-opengop.h265")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        // The second CRA (type 21) in decode order.
        let cras = aus.indices.filter { i in units(of: aus[i]).contains { ($0[0] >> 1) & 0x3F == 21 } }
        #expect(cras.count >= 2)
        let join = cras[0]
        let hasRASL = aus[(join + 1)...].prefix(4).contains { au in units(of: au).contains { [8, 9].contains(($0[0] >> 1) & 0x3F) } }
        #expect(hasRASL, "the capture has RASL pictures after its CRA")
        var p = RTPPacketizer(codec: .h265, ssrc: 7, mtu: 1200)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        var o = Harness.liveOptions(frames: 1000, idleFlushMicros: 0)
        o.timeoutSeconds = 1
        let h = Harness(source: source, options: o)
        h.start()
        for (i, au) in aus.enumerated().dropFirst(join) {
            Sender.udp(port: boundPort, datagrams: p.packetize(units(of: au), timestamp90kHz: UInt32(i * 3000)))
            Sender.pace(micros: 2_000)   // one access unit per 2 ms, like a sender
        }
        let r = h.finish()
        #expect(r.hashes.count > 20)
        #expect(r.hashes == Array(expected.suffix(r.hashes.count)), "every picture shown is right: no RASL garbage")
        #expect(r.summary.decodeErrors == 0)
    }

    /// SPS/PPS only at the very start; a receiver that joins later waits quietly, and starts at
    /// the next IDR once it has them (here from an SDP's sprop-parameter-sets).
    @Test func parameterSetsSentOnceThenAJoin() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let first = units(of: aus[0])
        let sets = first.filter { [7, 8].contains($0[0] & 0x1F) }
        let stripped = aus.map { au in units(of: au).filter { ![7, 8].contains($0[0] & 0x1F) } }
        for withSDP in [false, true] {
            var o = Harness.liveOptions(frames: 1000, idleFlushMicros: 0)
            o.timeoutSeconds = 1
            if withSDP {
                let b64 = sets.map { Data($0).base64EncodedString() }.joined(separator: ",")
                o.sdp = SessionDescription(text: "m=video 5600 RTP/AVP 96\na=rtpmap:96 H264/90000\na=fmtp:96 packetization-mode=1; sprop-parameter-sets=\(b64)\n")
                #expect(o.sdp?.parameterSets.count == 2)
            }
            var p = RTPPacketizer(codec: .h264, ssrc: 9, mtu: 1200)
            let source = try Sender.rtpSource()
            let boundPort = source.boundPort
            let h = Harness(source: source, options: o)
            h.start()
            for (i, u) in stripped.enumerated().dropFirst(5) {
                Sender.udp(port: boundPort, datagrams: p.packetize(u, timestamp90kHz: UInt32(i * 3000)))
                Sender.pace(micros: 2_000)   // one access unit per 2 ms, like a sender
            }
            let r = h.finish()
            if withSDP {
                #expect(r.hashes == Array(expected.dropFirst(30)), "decoding starts at the IDR at 30")
            } else {
                #expect(r.hashes.count == 0, "nothing to decode without parameter sets")
                #expect(r.summary.skippedBeforeRandomAccess > 30)
                #expect(r.summary.decodeErrors == 0, "waiting is quiet: nothing sent to the decoder")
            }
        }
    }

    @Test func seiWithEscapedStartCodeLikeBytesKeepsItsStampAndTheAccessUnits() throws {
        let path = Fixtures.capture("test/h264-aud.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        // Time stamps whose bytes are 00 00 01 / 00 00 00 / 00 00 03 patterns before escaping.
        let stamps: [UInt64] = (0..<aus.count).map { UInt64($0) | 0x0000_0100_0000_0000 | ($0 % 2 == 0 ? 0 : 0x0000_0000_0003_0000) }
        let stamped = zip(aus, stamps).map { LiveSender.stamped($0, codec: .h264, captureMicros: $1) }
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: aus.count, idleFlushMicros: 0))
        h.start()
        Sender.paced(stamped, everyMicros: 1_000) { Sender.udp(port: boundPort, datagrams: [$0]) }   // 1 ms apart, like a sender
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.accessUnits == aus.count)
        #expect(r.timings.map(\.captureWallMicros) == stamps)
    }

    @Test func aKeyframeBurstLargerThanTheDefaultSocketBufferIsNotDropped() throws {
        let path = Fixtures.capture("default-720p30.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let bytes = try Fixtures.bytes(path)
        let defaultBuffer = Int((try? String(contentsOfFile: "/proc/sys/net/core/rmem_default", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "212992") ?? 212_992
        #expect(bytes.count > 2 * defaultBuffer, "the burst is larger than the default buffer")
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        #expect(source.grantedReceiveBufferBytes > bytes.count, "a large receive buffer was granted")
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
        // All of it in one burst, before the receiver starts reading.
        Sender.udp(port: boundPort, datagrams: Sender.randomCuts(bytes, sizes: 1400...1400, seed: 1), yieldEvery: 0)
        h.start()
        let r = h.finish()
        #expect(r.hashes == expected)
    }

    @Test func zeroLengthOrTruncatedUnitAtTheEndOfAStream() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let bytes = try Fixtures.bytes(path)
        let aus = Sender.accessUnits(of: bytes)
        let tmp = FileManager.default.temporaryDirectory
        // A start code with nothing after it.
        let zero = tmp.appendingPathComponent("zero-\(getpid()).h264")
        try Data(bytes + [0, 0, 0, 1]).write(to: zero)
        let r1 = try Harness.decodeFile(zero.path)
        #expect(r1.hashes == expected)
        #expect(r1.summary.zeroLengthNALUnits == 1)
        // The last access unit cut in the middle of its slice.
        let cut = tmp.appendingPathComponent("cut-\(getpid()).h264")
        let head = Array(aus.dropLast().joined())
        try Data(head + Array(aus.last!.prefix(aus.last!.count / 2))).write(to: cut)
        let r2 = try Harness.decodeFile(cut.path)
        #expect(Array(r2.hashes.prefix(expected.count - 1)) == Array(expected.dropLast()))
        #expect(r2.hashes.count <= expected.count)
    }
}
