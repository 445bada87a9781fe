import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport

/// A NAL unit cut by an idle flush and repaired on screen is repaired in the recording too:
/// `spyglass play --record` over TCP from a sender that stalls inside NAL units.
///
/// Serialized: each test runs a `spyglass play` child on a loopback TCP port.
@Suite(.serialized) struct RecordedRepairTests {
    /// The capture sent (one slice per picture: every cut lands in a picture's last slice).
    static let capture = "test/h264-baseline.h264"
    /// The stream as 1–7 byte writes, and where the sender stalls: before write `at`, until access
    /// unit `unit` (cut 10 bytes before its end, inside its slice) is in the recording's index.
    /// Waiting for that event, not a time, makes sure the receiver saw the stall: an idle flush
    /// cut the slice and the cut access unit went out.
    private static func dribble(_ aus: [[UInt8]], stallsIn: Set<Int>, seed: UInt64) -> (chunks: [[UInt8]], stalls: [Int: Int]) {
        var chunks: [[UInt8]] = []
        var stalls: [Int: Int] = [:]
        for (i, au) in aus.enumerated() {
            let cut = stallsIn.contains(i) ? au.count - 10 : au.count
            chunks += Sender.randomCuts(Array(au[..<cut]), sizes: 1...7, seed: seed + UInt64(i))
            guard cut < au.count else { continue }
            stalls[chunks.count] = i
            chunks += Sender.randomCuts(Array(au[cut...]), sizes: 1...7, seed: seed + 1000 + UInt64(i))
        }
        return (chunks, stalls)
    }

    /// Writes `chunks` to `fd`, stalling as ``dribble(_:stallsIn:seed:)`` said (the sender's
    /// stall, as a starved encoder's; it ends on the receiver's event). Returns the bytes written.
    private static func send(_ chunks: [[UInt8]], stalls: [Int: Int], fd: Int32, recording: String) -> Int {
        var written = 0
        for (i, c) in chunks.enumerated() {
            if let unit = stalls[i] {
                #expect(Wait.until(timeoutSeconds: 30) { (RecordingIndex.load(streamPath: recording)?.entries.count ?? 0) > unit },
                        "access unit \(unit), cut by the stall, was recorded")
            }
            written += max(0, c.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, c.count, Int32(MSG_NOSIGNAL)) })
        }
        return written
    }

    /// The first position where `a` and `b` differ (the shorter one's count when one is a prefix of the other).
    private static func firstDifference(_ a: [Fixtures.FrameHash], _ b: [Fixtures.FrameHash]) -> Int {
        zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    }

    /// Starts `spyglass play tcp://127.0.0.1:PORT?listen` recording to `base`, and connects once
    /// it says it listens: then the port is its own (another test may take a free port first;
    /// the child then fails to bind, and another port is tried).
    private static func startReceiver(base: String, extra: [String]) throws -> (Fixtures.Child, Int32) {
        for _ in 0..<5 {
            let port = try Sender.freeTCPPort()
            let child = try Fixtures.start(Fixtures.spyglassBinary, ["play", "tcp://127.0.0.1:\(port)?listen", "--display", "none",
                                                                     "--idle-flush-ms", "1", "--record", base + ".h264"] + extra)
            let listening = { ((try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? "").contains("waiting for a sender on port \(port)") }
            #expect(Wait.until(timeoutSeconds: 30) { listening() || !child.process.isRunning }, "spyglass play started")
            if listening() { return (child, Sender.tcpConnect(port: port)) }
            _ = child.wait()
        }
        Issue.record("spyglass play could not listen on any of 5 free tcp ports")
        throw CancellationError()
    }

    @Test func theRecordingHoldsTheRepairedUnitsAndDecodesToWhatWasShown() throws {
        let path = Fixtures.capture(Self.capture)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("recrepair-\(getpid())-\(UUID().uuidString)").path
        let (child, fd) = try Self.startReceiver(base: base, extra: ["--timeout", "1", "--framemd5", base + ".md5",
                                                                    "--summary", base + ".json"])
        try #require(fd >= 0)
        let (chunks, stalls) = Self.dribble(aus, stallsIn: [4, 13, 27, 38], seed: 61)
        _ = Self.send(chunks, stalls: stalls, fd: fd, recording: base + ".h264")
        close(fd)
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
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("reckill-\(getpid())-\(run)-\(UUID().uuidString)").path
            let last = rng.next(in: 10...(aus.count - 1))
            let stallsIn = Set((0..<3).map { _ in rng.next(in: 1...(last - 1)) })
            let (child, fd) = try Self.startReceiver(base: base, extra: ["--timeout", "30"])
            try #require(fd >= 0)
            let (chunks, stalls) = Self.dribble(Array(aus[...last]), stallsIn: stallsIn, seed: UInt64(run) * 7919)
            // Written without closing: the receiver is killed, the sender does not leave.
            let written = Self.send(chunks, stalls: stalls, fd: fd, recording: base + ".h264")
            // Every access unit sent is in the index: the repairs, which come before the next access unit, were recorded.
            #expect(Wait.until(timeoutSeconds: 30) { (RecordingIndex.load(streamPath: base + ".h264")?.entries.count ?? 0) > last },
                    "run \(run): all \(last + 1) access units recorded")
            kill(child.process.processIdentifier, SIGKILL)
            let (_, err) = child.wait()
            close(fd)
            #expect(written == chunks.reduce(0) { $0 + $1.count })
            guard FileManager.default.fileExists(atPath: base + ".h264") else {
                Issue.record("run \(run): nothing recorded: \(err)")
                continue
            }
            let want = Array(expected.prefix(last + 1))
            let recorded = try Fixtures.ffmpegFrameMD5(base + ".h264")
            #expect(recorded == want, "run \(run): stalls in \(stallsIn.sorted()) of 0...\(last); first wrong picture \(Self.firstDifference(recorded, want)): \(err)")
            let replay = try RecordingSource(streamPath: base + ".h264", untimed: true)
            let h = Harness(source: replay, options: ReceiverOptions())
            h.start()
            let replayed = h.finish().hashes
            #expect(replayed == want, "run \(run): the replay too; first wrong picture \(Self.firstDifference(replayed, want))")
        }
    }
}
