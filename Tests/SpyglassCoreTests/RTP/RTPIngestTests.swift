import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
import TestSupport
@testable import SpyglassTransport
@testable import SpyglassIngest

/// RTP on real sockets: from ffmpeg's RTP muxer (an independent packetizer) and from ours,
/// through tools/impair for loss, duplication, reordering and truncation.
///
/// Serialized: live receivers on loopback, fed by ffmpeg, by tools/impair or paced from here.
@Suite(.serialized) struct RTPIngestTests {
    /// Our packetizer's datagrams for a file, one group per access unit.
    static func rtpPackets(_ path: String, codec: VideoCodec, ssrc: UInt32 = 0x1234_5678, firstSeq: UInt16 = 65_500,
                           mtu: Int = 1200) throws -> [[[UInt8]]] {
        var p = RTPPacketizer(codec: codec, ssrc: ssrc, firstSequenceNumber: firstSeq, mtu: mtu)
        return try Sender.accessUnits(of: Fixtures.bytes(path)).enumerated().map { i, au in
            var s = AnnexBScanner()
            var units: [[UInt8]] = []
            s.push(au, arrivalMicros: 0) { units.append($0.bytes) }
            s.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
            return p.packetize(units, timestamp90kHz: UInt32(i * 3000))
        }
    }

    @Test func rtpFromFFmpegIsBitExact() throws {
        for (name, codec) in [("test/h264-high-4slices.h264", VideoCodec.h264), ("test/h265-4slices.h265", .h265),
                              ("default-720p30.h264", .h264)] {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            let source = try Sender.rtpSource()
            let boundPort = source.boundPort
            let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count, idleFlushMicros: 1_000))
            h.start()
            let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-re", "-i", path, "-c", "copy",
                "-f", "rtp", "rtp://127.0.0.1:\(boundPort)?pkt_size=1200"])
            #expect(rc == 0, "\(err)")
            let r = h.finish()
            #expect(r.summary.rtp, "\(name): RTP detected")
            #expect(r.summary.codec == codec.displayName)
            #expect(r.hashes == expected, "\(name)")
            #expect(r.summary.datagramsLost == 0)
            #expect(r.summary.decodeErrors == 0)
        }
    }

    @Test func markerBitEndsTheAccessUnitWithoutWaiting() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let groups = try Self.rtpPackets(path, codec: .h264)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        // Idle flush off: only the marker bit can end an access unit before the next one starts.
        let h = Harness(source: source, options: Harness.liveOptions(frames: groups.count, idleFlushMicros: 0))
        h.start()
        // Each access unit goes out only once the frame of the one before is out: a receiver that
        // waited for the next access unit to end this one would never produce it.
        for (i, g) in groups.enumerated() {
            Sender.udp(port: boundPort, datagrams: g)
            guard h.waitForFrames(i + 1) else {
                Issue.record("frame \(i) did not come out within 10 s of its access unit, with nothing sent after it")
                h.pipeline.stop()
                break
            }
        }
        let r = h.finish()
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(path)))
        #expect(Set(r.timings.map(\.completion)) == [.markerBit])
    }

    @Test func stapaAndAggregationPacketsAndSequenceWrap() throws {
        // Parameter sets in one STAP-A (H.264) / AP (H.265), the rest FU and single NAL packets,
        // with sequence numbers wrapping through 65535.
        for (name, codec) in [("test/h264-baseline.h264", VideoCodec.h264), ("test/h265-main.h265", .h265)] {
            let path = Fixtures.capture(name)
            var groups = try Self.rtpPackets(path, codec: codec)
            // Rebuild the first access unit: aggregate its parameter sets.
            var s = AnnexBScanner()
            var units: [[UInt8]] = []
            s.push(Sender.accessUnits(of: try Fixtures.bytes(path))[0], arrivalMicros: 0) { units.append($0.bytes) }
            s.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
            let sets = units.filter { NALUnitHeader(codec: codec, bytes: $0)!.isParameterSet }
            let rest = units.filter { !NALUnitHeader(codec: codec, bytes: $0)!.isParameterSet }
            var agg: [UInt8] = codec == .h264 ? [0x78] : [0x60, 0x01]
            for u in sets { agg += [UInt8(u.count >> 8), UInt8(u.count & 0xFF)] + u }
            var p = RTPPacketizer(codec: codec, ssrc: 0x1234_5678, firstSequenceNumber: 65_499, mtu: 1200)
            let first = [RTPPacket.build(marker: false, payloadType: 96, sequenceNumber: 65_499, timestamp: 0, ssrc: 0x1234_5678, payload: agg)]
                + p.packetize(rest, timestamp90kHz: 0)
            // Renumber everything after the aggregate consecutively.
            var seq: UInt16 = 65_499
            groups[0] = first
            groups = groups.map { g in g.map { d in var d = d; d[2] = UInt8(seq >> 8); d[3] = UInt8(seq & 0xFF); seq &+= 1; return d } }
            let source = try Sender.rtpSource()
            let boundPort = source.boundPort
            let h = Harness(source: source, options: Harness.liveOptions(frames: groups.count, idleFlushMicros: 0))
            h.start()
            Sender.paced(groups, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
            let r = h.finish()
            #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(path)), "\(name)")
            #expect(r.summary.datagramsLost == 0, "\(name)")
        }
    }

    @Test func newSSRCResetsAndThePictureReturns() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")   // IDR every 30 frames
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let a = try Self.rtpPackets(path, codec: .h264, ssrc: 0xAAAA_0001, firstSeq: 100)
        let b = try Self.rtpPackets(path, codec: .h264, ssrc: 0xBBBB_0002, firstSeq: 40_000)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 20 + expected.count, idleFlushMicros: 0))
        h.start()
        // The first sender dies after 20 access units; a restarted one sends the whole stream.
        Sender.paced(a.prefix(20), everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        Sender.paced(b, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.summary.resets == 1)
        #expect(Array(r.hashes.prefix(20)) == Array(expected.prefix(20)))
        #expect(Array(r.hashes.dropFirst(20)) == expected, "after the restart every frame is right again")
    }

    @Test func intraRefreshJoinWithoutIDRRecoversWithinTheRefreshPeriod() throws {
        // x264 intra refresh: only the first picture is IDR; later periods start with a recovery
        // point SEI. Join after the IDR; decoding starts at the next recovery point.
        let path = Fixtures.capture("test/h264-intra-refresh.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let groups = try Self.rtpPackets(path, codec: .h264)
        let join = 10
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        var o = Harness.liveOptions(frames: 1000, idleFlushMicros: 0)
        o.timeoutSeconds = 1
        let h = Harness(source: source, options: o)
        h.start()
        Sender.paced(groups.dropFirst(join), everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.summary.skippedBeforeRandomAccess > 0, "waited for the recovery point")
        let firstAU = try #require(r.presentedAccessUnits.first)
        // Access unit indexes count from the join; frame k of ours is frame join+k of the file.
        let period = 30
        let clean = r.hashes.indices.filter { r.presentedAccessUnits[$0] - firstAU >= period }
        #expect(clean.count > 10)
        for i in clean {
            #expect(r.hashes[i] == expected[join + r.presentedAccessUnits[i]],
                    "frame \(join + r.presentedAccessUnits[i]) after recovery")
        }
    }

    /// Sends `impaired` through tools/impair to a live receiver, waits until the proxy has passed
    /// all of it on, then sends `clean` straight to the same receiver. Returns what it decoded.
    private func throughImpair(_ args: [String], impaired: [[[UInt8]]], clean: [[[UInt8]]], frames: Int) throws -> Harness.Result {
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        var o = Harness.liveOptions(frames: frames, idleFlushMicros: 2_000)
        o.timeoutSeconds = 2
        // The end marker: one datagram longer than any packet of the stream (MTU 300), so no
        // truncated packet can look like it; not RTP (version 0), so the receiver only counts it.
        let marker = [UInt8](repeating: 0, count: 1_000)
        let markersSeen = Locked(0)
        var observers = FeedObservers()
        observers.datagram = { size in if size == marker.count { markersSeen.mutate { $0 += 1 } } }
        let h = Harness(source: source, options: o, observers: observers)
        h.start()
        let p = Process()
        p.executableURL = Fixtures.root.appendingPathComponent("tools/impair")
        p.arguments = ["--listen", "0", "--to", "127.0.0.1:\(boundPort)"] + args
        // stdout: its port first, one line of counts at exit (a pipe that small cannot fill);
        // stderr inherited.
        let out = Pipe()
        p.standardOutput = out
        try Fixtures.launch(p)   // with SIGTERM unblocked: it is stopped with one
        defer { if p.isRunning { p.terminate() }; p.waitUntilExit() }
        // First line: {"listening": PORT}
        var line = Data()
        while !line.contains(0x0A) {
            let more = out.fileHandleForReading.availableData
            if more.isEmpty { break }   // end of file: impair did not start
            line.append(more)
        }
        let json = try? JSONSerialization.jsonObject(with: line.prefix { $0 != 0x0A }) as? [String: Int]
        let port = UInt16(try #require(json?["listening"], "tools/impair printed no port: \(String(decoding: line, as: UTF8.self))"))
        // Pacing: one access unit every 3 ms, as a sender on a link would.
        Sender.paced(impaired, everyMicros: 3_000) { g in Sender.udp(port: port, datagrams: g) }
        // The proxy handles datagrams in order: once a marker sent after the stream is through, the
        // stream is too (the marker may be lost or held back itself: send it again until one is).
        let through = Wait.until(timeoutSeconds: 10, pollMillis: 20) {
            if markersSeen.get() > 0 { return true }
            Sender.udp(port: port, datagrams: [marker])
            return false
        }
        #expect(through, "tools/impair passed the stream on within 10 s")
        p.terminate()   // it sends what it still holds, then exits
        p.waitUntilExit()
        // The clean part comes from another socket: a new sender, heard once the relay has been
        // silent as long as a port waits before it lets another sender take over (SenderLatch).
        usleep(UInt32(SenderLatch<UDPPeer>.takeoverSilenceMicros))
        Sender.paced(clean, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        return h.finish()
    }

    /// The same receiver, after loss, duplication, reordering and truncation, recovers at the next
    /// IDR: from there every picture is bit-exact and none is flagged damaged.
    @Test func lossDuplicationReorderAndTruncationAreCountedAndThePictureRecovers() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")   // IDR at 0 and 30
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let groups = try Self.rtpPackets(path, codec: .h264, mtu: 300)
        let idr = 30
        let tail = expected.count - idr
        for (loss, seed) in [(0.01, 1), (0.05, 2)] {
            // The first 25 access units impaired, then the rest clean, to the same receiver.
            let r = try throughImpair(["--loss", "\(loss)", "--dup", "\(loss)", "--reorder", "\(loss)", "--truncate", "\(loss / 2)",
                                       "--seed", "\(seed)"], impaired: Array(groups.prefix(25)), clean: Array(groups.dropFirst(25)),
                                      frames: 1000)
            #expect(r.summary.datagramsLost + r.summary.datagramsDuplicated + r.summary.datagramsReordered > 0,
                    "faults seen at \(loss)")
            // Damage reached this receiver: access units with lost bytes (shown flagged, or skipped
            // while it waited for a clean random-access point when the first IDR was hit).
            #expect(r.summary.damagedAccessUnits > 0, "\(loss): damaged access units before the IDR")
            #expect(r.hashes.count >= tail, "\(loss)")
            #expect(Array(r.hashes.suffix(tail)) == Array(expected.suffix(tail)),
                    "\(loss): bit-exact again from the IDR at \(idr)")
            #expect(Array(r.damaged.suffix(tail)) == Array(repeating: false, count: tail),
                    "\(loss): no damage flag from the IDR on")
        }
    }

    @Test func lossMidStreamIsConcealedThenCleanAtTheNextIDR() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        var groups = try Self.rtpPackets(path, codec: .h264, mtu: 300)
        // Drop one packet from the middle of access units 5 and 12.
        groups[5].remove(at: groups[5].count / 2)
        groups[12].remove(at: 1)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count, idleFlushMicros: 0))
        h.start()
        Sender.paced(groups, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.summary.datagramsLost == 2)
        #expect(r.summary.damagedAccessUnits == 2)
        #expect(r.hashes.count == expected.count, "a concealed frame for every access unit")
        #expect(r.damaged.filter { $0 }.count >= 2)
        #expect(Array(r.hashes.prefix(5)) == Array(expected.prefix(5)))
        #expect(r.hashes[5] != expected[5], "frame 5 is concealed, not the original")
        #expect(Array(r.hashes.suffix(15)) == Array(expected.suffix(15)), "clean again from the IDR at 30")
    }

    @Test func aSenderRestartWithTheOtherCodecIsFollowed() throws {
        let a = Fixtures.capture("test/h264-aud.h264"), b = Fixtures.capture("test/h265-main.h265")
        let expected = try Fixtures.ffmpegFrameMD5(a) + Fixtures.ffmpegFrameMD5(b)
        let groups = try Self.rtpPackets(a, codec: .h264, ssrc: 1, firstSeq: 10) + Self.rtpPackets(b, codec: .h265, ssrc: 2, firstSeq: 5000)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count, idleFlushMicros: 0))
        h.start()
        Sender.paced(groups, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.codec == "H.265")
    }

    @Test func reorderWindowPutsPacketsBackInOrder() throws {
        let path = Fixtures.capture("test/h264-high-4slices.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        var rng = SeededRandom(seed: 11)
        // Swap neighbours inside each access unit's packets (keep the marker packet last).
        let groups = try Self.rtpPackets(path, codec: .h264, mtu: 400).map { g -> [[UInt8]] in
            var g = g
            var i = 0
            while i + 2 < g.count { if rng.next(in: 0...2) == 0 { g.swapAt(i, i + 1); i += 2 } else { i += 1 } }
            return g
        }
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        var o = Harness.liveOptions(frames: expected.count, idleFlushMicros: 0)
        o.reorderWindowMicros = 20_000
        let h = Harness(source: source, options: o)
        h.start()
        Sender.paced(groups, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.datagramsLost == 0)
    }

    /// Stray packets from two other senders before a real stream must not wedge the receiver in
    /// restarts (found by a bad-input run: every packet used to reset the decoder again).
    @Test func strayPacketsFromSeveralSendersDoNotWedgeTheStream() throws {
        let path = Fixtures.capture("test/h264-aud.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let stray = [RTPPacket.build(marker: false, payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 0xAAAA, payload: [0x41, 0x9A, 0, 1]),
                     RTPPacket.build(marker: false, payloadType: 96, sequenceNumber: 9, timestamp: 0, ssrc: 0xBBBB, payload: [0x41, 0x9A, 0, 1])]
        let groups = try Self.rtpPackets(path, codec: .h264, ssrc: 0xCCCC, firstSeq: 500)
        let source = try Sender.rtpSource()
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count, idleFlushMicros: 0))
        h.start()
        Sender.udp(port: boundPort, datagrams: stray)
        Sender.paced(groups, everyMicros: 2_000) { g in Sender.udp(port: boundPort, datagrams: g) }
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.resets <= 2, "one restart per new sender, not one per packet")
    }
}
