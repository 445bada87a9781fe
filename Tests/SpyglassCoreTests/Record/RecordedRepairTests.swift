import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassCore

/// A NAL unit cut by an idle flush and repaired on screen is repaired in the recording too:
/// `spyglass play --record` over TCP from a sender that stalls inside NAL units.
///
/// Serialized: each test runs a `spyglass play` child on a loopback TCP port.
@Suite(.serialized) struct RecordedRepairTests {
    /// The capture sent (one slice per picture: every cut lands in a picture's last slice).
    static let capture = "test/h264-baseline.h264"
    /// A stall this long inside a NAL unit is longer than any wait the receiver learns (50 ms at most).
    static let stallMicros = 60_000

    /// The stream as 1–7 byte writes; before each write in the returned set the sender stalls.
    /// A stall sits 10 bytes before the end of each access unit in `stallsIn` (inside its slice).
    private static func dribble(_ aus: [[UInt8]], stallsIn: Set<Int>, seed: UInt64) -> (chunks: [[UInt8]], stalls: Set<Int>) {
        var chunks: [[UInt8]] = []
        var stalls: Set<Int> = []
        for (i, au) in aus.enumerated() {
            let cut = stallsIn.contains(i) ? au.count - 10 : au.count
            chunks += Sender.randomCuts(Array(au[..<cut]), sizes: 1...7, seed: seed + UInt64(i))
            guard cut < au.count else { continue }
            stalls.insert(chunks.count)
            chunks += Sender.randomCuts(Array(au[cut...]), sizes: 1...7, seed: seed + 1000 + UInt64(i))
        }
        return (chunks, stalls)
    }

    /// Starts `spyglass play tcp://127.0.0.1:PORT?listen` recording to `base`, and connects to it.
    private static func startReceiver(base: String, extra: [String]) throws -> (Fixtures.Child, Int32) {
        let port = try Sender.freeTCPPort()
        let child = try Fixtures.start(Fixtures.spyglassBinary, ["play", "tcp://127.0.0.1:\(port)?listen", "--display", "none",
                                                                 "--idle-flush-ms", "1", "--record", base] + extra)
        #expect(Wait.until(timeoutSeconds: 30) { Fixtures.tcpPortIsListening(port) || !child.process.isRunning },
                "spyglass play listens on tcp port \(port)")
        return (child, Sender.tcpConnect(port: port))
    }

    @Test func theRecordingHoldsTheRepairedUnitsAndDecodesToWhatWasShown() throws {
        let path = Fixtures.capture(Self.capture)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("recrepair-\(getpid())").path
        let (child, fd) = try Self.startReceiver(base: base, extra: ["--timeout", "1", "--framemd5", base + ".md5",
                                                                    "--summary", base + ".json"])
        try #require(fd >= 0)
        let (chunks, stalls) = Self.dribble(aus, stallsIn: [4, 13, 27, 38], seed: 61)
        // The stalls are the sender's (a starved encoder), on purpose: not a wait.
        Sender.tcpWrite(fd: fd, chunks: chunks) { stalls.contains($0) ? Self.stallMicros : 0 }
        let (rc, err) = child.wait(timeoutSeconds: 120)
        #expect(rc == 0, "\(err)")
        let summary = try JSONDecoder().decode(FeedSummary.self, from: Data(contentsOf: URL(fileURLWithPath: base + ".json")))
        #expect(summary.prematureIdleFlushes >= 4, "the stalls cut NAL units")
        #expect(summary.repairs >= 4 && summary.repairsFailed == 0, "and every cut was repaired")
        let shown = Fixtures.parseFrameMD5(try String(contentsOfFile: base + ".md5", encoding: .utf8))
        #expect(shown == expected, "what was shown equals ffmpeg's decode of the sent stream")
        #expect(try Fixtures.ffmpegFrameMD5(base + ".h264") == shown, "ffmpeg decodes the recording to what was shown")
        #expect(RecordingIndex.load(streamPath: base + ".h264")?.entries.count == aus.count, "one index entry per access unit")
    }

    /// `kill -9` after repairs: what the recording holds decodes (by ffmpeg, and by a replay) to
    /// the pictures shown, repaired ones included.
    @Test func killNineAfterRepairsLeavesTheRepairedUnitsInTheRecording() throws {
        let path = Fixtures.capture(Self.capture)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        var rng = SeededRandom(seed: 606)
        for run in 0..<4 {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("reckill-\(getpid())-\(run)").path
            let last = rng.next(in: 10...(aus.count - 1))
            let stallsIn = Set((0..<3).map { _ in rng.next(in: 1...(last - 1)) })
            let (child, fd) = try Self.startReceiver(base: base, extra: ["--timeout", "30"])
            try #require(fd >= 0)
            let (chunks, stalls) = Self.dribble(Array(aus[...last]), stallsIn: stallsIn, seed: UInt64(run) * 7919)
            var off = 0
            // Written without closing: the receiver is killed, the sender does not leave.
            for (i, c) in chunks.enumerated() {
                if stalls.contains(i) { usleep(UInt32(Self.stallMicros)) }   // the sender's stall, on purpose
                off += c.withUnsafeBytes { send(fd, $0.baseAddress, c.count, Int32(MSG_NOSIGNAL)) }
            }
            // Every access unit sent is in the index: the repairs, which come before the next access unit, were recorded.
            #expect(Wait.until(timeoutSeconds: 30) { (RecordingIndex.load(streamPath: base + ".h264")?.entries.count ?? 0) > last },
                    "run \(run): all \(last + 1) access units recorded")
            kill(child.process.processIdentifier, SIGKILL)
            _ = child.wait()
            close(fd)
            #expect(off == chunks.reduce(0) { $0 + $1.count })
            let want = Array(expected.prefix(last + 1))
            #expect(try Fixtures.ffmpegFrameMD5(base + ".h264") == want, "run \(run): stalls in \(stallsIn.sorted()) of 0...\(last)")
            let replay = try RecordingSource(streamPath: base + ".h264", untimed: true)
            let h = Harness(source: replay, options: ReceiverOptions())
            h.start()
            #expect(h.finish().hashes == want, "run \(run): the replay too")
        }
    }
}
