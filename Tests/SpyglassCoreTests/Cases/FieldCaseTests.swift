import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// The field cases (captures/cases/README.md): each input that failed for a user, with the
/// numbers its case asks for.
///
/// Serialized: the tests run live UDP and TCP receivers, some of them timed against a sender's
/// pauses.
@Suite(.serialized) struct FieldCaseTests {
    let field = Fixtures.capture("cases/field-320x240-60au.h264")

    // MARK: empty-datagrams

    /// One access unit per datagram, a 0-byte datagram after every 10th: 60/60 frames, no
    /// end-of-stream state, empty datagrams counted and never decoded.
    @Test func emptyDatagramsAreCountedNotDecoded() throws {
        let expected = try Fixtures.ffmpegFrameMD5(field)
        #expect(expected.count == 60)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(field))
        #expect(aus.count == 60)
        var datagrams: [[UInt8]] = []
        for (i, au) in aus.enumerated() {
            datagrams.append(au)
            if i % 10 == 9 { datagrams.append([]) }
        }
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 60))
        h.start()
        Sender.udp(port: boundPort, datagrams: datagrams, pauseMicros: { _ in 2_000 })   // pacing: 2 ms apart, like a sender
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.emptyDatagrams == 6)
        #expect(r.summary.decodeErrors == 0)
        #expect(r.summary.datagrams == 60, "empty datagrams are not counted as data")
    }

    /// Access units that are empty after stripping (AUD only, filler only) never reach the decoder.
    @Test func accessUnitDelimiterOrFillerOnlyGroupsAreNotFrames() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(field))
        var stream: [UInt8] = []
        for au in aus {
            stream += au
            stream += [0, 0, 0, 1, 0x09, 0xF0]                   // a lone AUD
            stream += [0, 0, 0, 1, 0x0C, 0xFF, 0xFF, 0xFF, 0x80]  // a lone filler unit
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aud-filler-\(getpid()).h264")
        try Data(stream).write(to: url)
        let r = try Harness.decodeFile(url.path)
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(field)))
        #expect(r.summary.accessUnits == 60)
        #expect(r.summary.decodeErrors == 0)
    }

    // MARK: oversized-datagrams

    /// One access unit per datagram, up to ~10 KB: read whole, 60/60 frames equal.
    @Test func datagramsLargerThanTheMTUAreReadWhole() throws {
        let expected = try Fixtures.ffmpegFrameMD5(field)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(field))
        #expect((aus.map(\.count).max() ?? 0) > 2048, "the case has datagrams over 2 KB")
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 60))
        h.start()
        Sender.udp(port: boundPort, datagrams: aus, pauseMicros: { _ in 2_000 })   // pacing: 2 ms apart, like a sender
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.truncatedDatagrams == 0)
        #expect(r.summary.damagedAccessUnits == 0)
    }

    /// A datagram cut by a small receive buffer (MSG_TRUNC) is counted and its access unit damaged.
    @Test func truncatedDatagramsAreCountedAndMarkedDamaged() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(field))
        let big = aus.filter { $0.count > 2048 }.count
        #expect(big > 0)
        let source = try UDPSource(host: "127.0.0.1", port: 0, readBufferBytes: 2048)
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 60))
        h.start()
        Sender.udp(port: boundPort, datagrams: aus, pauseMicros: { _ in 2_000 })   // pacing: 2 ms apart, like a sender
        let r = h.finish()
        #expect(r.summary.truncatedDatagrams == big)
        #expect(r.summary.damagedAccessUnits == big)
        // Every cut access unit is either flagged on its frame or gave no frame at all.
        let flagged = r.damaged.filter { $0 }.count
        let missing = 60 - r.hashes.count
        #expect(flagged + missing >= big, "flagged \(flagged), missing \(missing)")
        #expect(flagged > 0, "frames \(r.hashes.count) concealed \(r.summary.concealedFrames) errors \(r.summary.decodeErrors)")
    }

    // MARK: sender-pause

    /// AU by AU at 30 fps, a 3 s pause after AU 29: every frame, frame 29 included, comes out
    /// before the next access unit is sent (not one frame late), completed by the idle rule, and
    /// every frame equals ffmpeg's.
    ///
    /// Each access unit is sent only once the frame before it is out (a generous 10 s deadline),
    /// then after the sender's pause: a receiver that needed the next access unit to end one would
    /// never produce its frame, on any machine, however loaded.
    private func checkSenderPause(transport: String) throws {
        let expected = try Fixtures.ffmpegFrameMD5(field)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(field))
        var options = Harness.liveOptions(frames: 60)
        options.idleFlushMicros = ReceiverOptions().idleFlushMicros   // the default rule under test
        var late: [Int] = []
        // Called before access unit i goes out: frame i - 1 must be out already; then the
        // sender's own rhythm (pacing, like the field sender: 30 fps, 3 s pause after AU 29).
        func beforeSending(_ i: Int, _ h: Harness) -> Int {
            guard i > 0 else { return 0 }
            if !h.waitForFrames(i) { late.append(i - 1) }
            return i == 30 ? 3_000_000 : 33_333
        }
        let h: Harness
        if transport == "udp" {
            let source = try UDPSource(host: "127.0.0.1", port: 0)
            let boundPort = source.boundPort
            h = Harness(source: source, options: options)
            h.start()
            Sender.udp(port: boundPort, datagrams: aus, pauseMicros: { beforeSending($0, h) })
        } else {
            let source = try TCPSource(listenOn: "127.0.0.1", port: 0)
            let listeningPort = source.listeningPort
            h = Harness(source: source, options: options)
            h.start()
            let fd = Sender.tcpConnect(port: listeningPort)
            #expect(fd >= 0, "\(transport): connected")
            Sender.tcpWrite(fd: fd, chunks: aus, pauseMicros: { beforeSending($0, h) })
        }
        if !h.waitForFrames(aus.count) { late.append(aus.count - 1) }
        let r = h.finish()
        #expect(late == [], "\(transport): frames not out within 10 s of their access unit, with nothing sent after it")
        #expect(r.hashes == expected, "\(transport)")
        guard r.timings.count == 60 else { Issue.record("\(transport): \(r.timings.count) frames"); return }
        #expect(r.timings[29].presentedMicros < r.timings[30].firstByteMicros,
                "\(transport): frame 29 was out before AU 30 arrived")
        // (The last one may end with the input instead: the TCP sender closes after it.)
        let completions = Set(r.timings.dropLast().map(\.completion))
        #expect(completions.isSubset(of: [AccessUnit.Completion.idleGap, .burstEnd]),
                "\(transport): every access unit ended by the idle rule, none by the next one: \(completions)")
    }

    @Test func senderPauseUDP() throws { try checkSenderPause(transport: "udp") }
    @Test func senderPauseTCP() throws { try checkSenderPause(transport: "tcp") }

    // MARK: filler-and-end-units

    private let fillerFiles = ["cases/filler.h264", "cases/end_of_seq.h264", "cases/filler_eob.h265"]

    @Test func fillerAndEndUnitsGiveExactlySixtyFrames() throws {
        for name in fillerFiles {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            #expect(expected.count == 60, "\(name)")
            let r = try Harness.decodeFile(path)
            #expect(r.hashes == expected, "\(name)")
            #expect(r.summary.accessUnits == 60, "\(name)")
            #expect(r.summary.framesDecoded == 60, "\(name)")
            #expect(r.summary.decodeErrors == 0, "\(name)")
        }
    }

    @Test func fillerAndEndUnitsOverUDPInRandomCuts() throws {
        for name in fillerFiles {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            let source = try UDPSource(host: "127.0.0.1", port: 0)
            let boundPort = source.boundPort
            var o = Harness.liveOptions(frames: 60)
            o.timeoutSeconds = 3
            let h = Harness(source: source, options: o)
            h.start()
            Sender.udp(port: boundPort, datagrams: Sender.randomCuts(try Fixtures.bytes(path), sizes: 1...1400, seed: 3))
            let r = h.finish()
            #expect(r.hashes == expected, "\(name)")
            #expect(r.summary.accessUnits == 60, "\(name)")
        }
    }
}
