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
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// The flight recorder: round trip, and `kill -9` at random moments.
///
/// Serialized: live receivers on loopback, and spyglass processes recording from UDP ports.
@Suite(.serialized) struct RecorderTests {
    private func replayHashes(_ stream: String) throws -> ([Fixtures.FrameHash], RecordingIndex) {
        let source = try RecordingSource(streamPath: stream, untimed: true)
        var o = ReceiverOptions()
        o.idleFlushMicros = 1_000
        let h = Harness(source: source, options: o)
        h.start()
        return (h.finish().hashes, source.index)
    }

    @Test func recordThenReplayIsBitExactWithTheArrivalTimesSeenLive() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("rec-\(getpid())-\(UUID().uuidString)").path
        let recorder = Recorder(path: base)
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let boundPort = source.boundPort
        var observers = FeedObservers()
        observers.accessUnit = { au, store in recorder.record(au, parameterSets: store.allUnits, wallMicros: 0) }
        observers.end = { _ in recorder.close() }   // on the feed's thread, which owns the recorder
        let h = Harness(source: source, options: Harness.liveOptions(frames: aus.count, idleFlushMicros: 1_000), observers: observers)
        h.start()
        Sender.paced(aus, everyMicros: 5_000) { Sender.udp(port: boundPort, datagrams: Sender.randomCuts($0, sizes: 1200...1200, seed: 1)) }   // one access unit per 5 ms, like a sender
        let live = h.finish()
        #expect(live.hashes == expected)
        let (replayed, index) = try replayHashes(base + ".h264")
        #expect(replayed == expected, "replay is bit-exact")
        #expect(index.entries.count == aus.count)
        #expect(index.repaired == 0)
        #expect(index.entries.map(\.firstByteMicros) == live.timings.map(\.firstByteMicros),
                "index times are the live arrival times")
        #expect(index.entries.map(\.lastByteMicros) == live.timings.map(\.lastByteMicros))
        #expect(index.entries.filter(\.keyframe).count == 2)
    }

    /// Records the baseline capture's 45 access units as if they arrived 20 ms apart (IDRs at 0
    /// and 30) into `base.h264` and its index.
    static func recordBaselineCapture20msApart(to base: String) throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-baseline.h264")))
        let recorder = Recorder(path: base)
        var asm = AccessUnitAssembler(codec: .h264)
        for (i, au) in aus.enumerated() {
            var s = AnnexBScanner()
            let t = UInt64(1_000_000 + i * 20_000)
            s.push(au, arrivalMicros: t) { if let a = asm.push($0) { recorder.record(a, parameterSets: [], wallMicros: 0) } }
            s.flush(atMicros: t, reason: .endOfStream) { if let a = asm.push($0) { recorder.record(a, parameterSets: [], wallMicros: 0) } }
        }
        if let a = asm.flush(atMicros: 0, reason: .endOfStream) { recorder.record(a, parameterSets: [], wallMicros: 0) }
        recorder.close()
    }

    @Test func replaySeekPauseAndStep() throws {
        // A recording with real arrival times: 45 access units 20 ms apart, IDRs at 0 and 30.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("seek-\(getpid())-\(UUID().uuidString)").path
        try Self.recordBaselineCapture20msApart(to: base)
        let source = try RecordingSource(streamPath: base + ".h264", untimed: true)
        #expect(source.index.entries.count == 45)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        func next() throws -> SourceEvent { try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: 1_000) } }
        // Seek to 0.7 s: lands on the IDR at access unit 30 (0.6 s), the keyframe before the target.
        source.seek(by: 0.7)
        _ = try next()
        #expect(source.progress.frame == 31, "delivering entry 30")
        #expect(abs(source.positionSeconds - 0.6) <= 0.001)
        // Pause: the seek still goes on to its target (entry 35, 0.7 s), then nothing more until a step.
        source.togglePause()
        while case .data = try next() {}
        #expect(source.progress.frame == 36, "the target's picture, entry 35")
        #expect((try next()) == .timeout)
        source.step()
        if case .data = try next() {} else { Issue.record("a step delivers one access unit") }
        #expect(source.progress.frame == 37)
        #expect(source.progress.paused)
        // A seek while paused goes on to its target's picture, then holds (a newcomer saw the bar
        // move while the picture stayed): from 0.72 s back to 0.1 s is the IDR at 0, then entries 1…5.
        source.seek(by: -0.62)
        var delivered = 0
        while case .data = try next() { delivered += 1 }
        #expect(source.progress.frame == 6, "the target's access unit, entry 5, was delivered")
        #expect(delivered >= 6, "the keyframe and the pictures up to the target")
        #expect((try next()) == .timeout, "and then it holds")
        #expect(source.progress.paused)
    }

    /// A window's replay holds its last picture at the end (paused, as ffplay's window stays)
    /// until `q`; a seek from there shows that picture, and resuming starts from the beginning.
    /// Without the hold (`--autoexit`, or headless) the source ends.
    @Test func aWindowsReplayHoldsTheLastPictureAtTheEnd() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hold-\(getpid())-\(UUID().uuidString)").path
        try Self.recordBaselineCapture20msApart(to: base)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        for holds in [true, false] {
            let source = try RecordingSource(streamPath: base + ".h264", untimed: true, holdsAtEnd: holds)
            func next() throws -> SourceEvent { try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: 1_000) } }
            var delivered = 0
            while case .data = try next() { delivered += 1 }
            #expect(delivered >= 45 && source.progress.frame == 45, "every access unit, to the last")
            guard holds else {
                #expect((try next()) == .end, "without the hold the replay ends")
                continue
            }
            #expect((try next()) == .timeout && source.progress.paused, "held at the end, paused")
            source.seek(by: -0.1)
            var again = 0
            while case .data = try next() { again += 1 }
            #expect(again >= 1 && source.progress.frame < 45 && source.progress.paused, "a seek back from the end shows its picture and holds")
            source.togglePause()
            while case .data = try next() {}
            #expect(source.progress.paused, "resumed, it plays to the end and holds again")
        }
    }

    /// A replay held on its last picture (or paused) keeps its decoder: its silence is on
    /// purpose, not a sender gone quiet, so the idle release (here after 0.3 s) does not close it
    /// and say "no data"; played again from there, it decodes every picture again.
    @Test func aHeldReplayKeepsItsDecoder() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(getpid())-\(UUID().uuidString)").path
        try Self.recordBaselineCapture20msApart(to: base)
        let source = try RecordingSource(streamPath: base + ".h264", untimed: true, holdsAtEnd: true)
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 60
        o.decoderIdleReleaseMicros = 300_000
        let h = Harness(source: source, options: o)
        h.start()
        defer { h.pipeline.stop(); _ = h.finish() }
        #expect(h.waitForFrames(45), "the whole recording: \(h.framesSoFar) pictures")
        #expect(Wait.until { source.progress.paused }, "held at the end")
        let releases = { h.pipeline.metrics.snapshot().counters[.decoderReleases] ?? 0 }
        #expect(!Wait.until(timeoutSeconds: 1.5) { releases() > 0 }, "held 5 times the idle release, the decoder stayed open")
        source.togglePause()
        #expect(h.waitForFrames(90), "played again from the start: \(h.framesSoFar) pictures")
    }

    /// `replay --from` is frame-accurate: it decodes from the keyframe before the target and shows
    /// (and hashes) only the pictures from the target on.
    @Test func replayFromIsFrameAccurate() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("fromseek-\(getpid())-\(UUID().uuidString)").path
        let recorder = Recorder(path: base)
        var asm = AccessUnitAssembler(codec: .h264)
        for (i, au) in aus.enumerated() {
            var s = AnnexBScanner()
            let t = UInt64(1_000_000 + i * 20_000)   // 20 ms apart: entry k at 0.02 k s
            s.push(au, arrivalMicros: t) { if let a = asm.push($0) { recorder.record(a, parameterSets: [], wallMicros: 0) } }
            s.flush(atMicros: t, reason: .endOfStream) { if let a = asm.push($0) { recorder.record(a, parameterSets: [], wallMicros: 0) } }
        }
        if let a = asm.flush(atMicros: 0, reason: .endOfStream) { recorder.record(a, parameterSets: [], wallMicros: 0) }
        recorder.close()
        let out = base + ".framemd5"
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", base + ".h264", "--from", "0.7",
            "--display", "none", "--untimed", "--framemd5", out])
        #expect(rc == 0, "\(err)")
        // 0.7 s is entry 35; the keyframe before it is the IDR at 30 (0.6 s).
        #expect(Fixtures.parseFrameMD5(try String(contentsOfFile: out, encoding: .utf8)) == Array(expected.dropFirst(35)))
        #expect(err.contains("15 frames decoded (5 only to reach a seek target), 10 displayed, 0 dropped"),
                "the summary names the pictures decoded only to reach the target: \(err)")
    }

    /// A replay's latency log uses the recorded arrival and capture times: the sender+network stage
    /// of every frame equals the live run's.
    @Test func replayLatencyLogReproducesTheLiveAnalysis() throws {
        let tmp = FileManager.default.temporaryDirectory
        let base = tmp.appendingPathComponent("livelat-\(getpid())-\(UUID().uuidString)").path
        let port = try Sender.freeUDPPort()
        let live = Process()
        live.executableURL = URL(fileURLWithPath: Fixtures.spyglassBinary)
        live.arguments = ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--quiet", "--timeout", "4",
                          "--record", base + ".h264", "--latency-log", base + "-live.csv", "--idle-flush-ms", "20"]
        try Fixtures.launch(live)   // stdout and stderr inherited: no pipe to fill; --timeout 4 ends it
        #expect(Wait.until { Fixtures.udpPortIsBound(port) || !live.isRunning } && live.isRunning,
                "spyglass play bound udp port \(port) within 10 s")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(port)",
            "--size", "320x240", "--duration", "1.5"])
        #expect(rc == 0, "\(err)")
        live.waitUntilExit()
        let (rc2, _, err2) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", base + ".h264", "--display", "none", "--untimed",
            "--latency-log", base + "-replay.csv"])
        #expect(rc2 == 0, "\(err2)")
        func column(_ file: String) throws -> [Double] {
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            let header = lines[0].split(separator: ",", omittingEmptySubsequences: false)
            let k = try #require(header.firstIndex(of: "sender_network_ms"))
            return lines.dropFirst().compactMap { Double($0.split(separator: ",", omittingEmptySubsequences: false)[k]) }
        }
        let a = try column(base + "-live.csv"), b = try column(base + "-replay.csv")
        #expect(a.count > 30)
        #expect(a.count == b.count)
        for (x, y) in zip(a, b) { #expect(abs(x - y) <= 0.05, "sender+network, live vs replay") }
    }

    @Test func killNineWhileRecordingLeavesAReplayableFile() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        var rng = SeededRandom(seed: 2024)
        var recordedRuns = 0
        defer { #expect(recordedRuns > 10, "most runs recorded something before the kill") }
        for run in 0..<20 {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("kill-\(getpid())-\(run)-\(UUID().uuidString)").path
            let port = try Sender.freeUDPPort()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: Fixtures.spyglassBinary)
            p.arguments = ["play", "udp://127.0.0.1:\(port)", "--display", "none", "--quiet", "--record", base + ".h264", "--timeout", "20",
                           "--idle-flush-ms", "50"]   // crash safety is under test, not the idle guess
            p.standardError = FileHandle.nullDevice
            try Fixtures.launch(p)
            // Wait until the child has bound its port (start-up time varies on a loaded machine).
            // /proc/net/udp is read, not the port taken: binding it to probe could steal it from the child.
            guard Wait.until({ Fixtures.udpPortIsBound(port) || !p.isRunning }), p.isRunning else {
                Issue.record("run \(run): spyglass play did not bind udp port \(port) within 10 s (exit \(p.isRunning ? 0 : p.terminationStatus))")
                if p.isRunning { kill(p.processIdentifier, SIGKILL) }
                p.waitUntilExit()
                continue
            }
            let killAfter = rng.next(in: 1...(aus.count - 1))
            for (i, au) in aus.enumerated() {
                Sender.udp(port: port, datagrams: Sender.randomCuts(au, sizes: 1400...1400, seed: UInt64(i)))
                Sender.pace(micros: 3_000)   // one access unit per 3 ms, like a sender
                if i == killAfter { break }
            }
            usleep(UInt32(rng.next(in: 0...4_000)))   // a random kill moment, on purpose (not a wait)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            // Killed before the first access unit was complete: nothing to replay, and nothing written.
            guard let idx = RecordingIndex.load(streamPath: base + ".h264"), !idx.entries.isEmpty else { continue }
            recordedRuns += 1
            let (replayed, index) = try replayHashes(base + ".h264")
            #expect(index.entries.count <= killAfter + 1, "run \(run)")
            #expect(replayed.count == index.entries.count, "run \(run): one frame per completed access unit")
            #expect(replayed == Array(expected.prefix(replayed.count)), "run \(run)")
        }
    }

    @Test func tornIndexAndTruncatedStreamAreRepaired() throws {
        let path = Fixtures.capture("test/h264-aud.h264")
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("torn-\(getpid())-\(UUID().uuidString)").path
        let r = Recorder(path: base)
        var asm = AccessUnitAssembler(codec: .h264)
        var scanner = AnnexBScanner()
        for au in aus { scanner.push(au, arrivalMicros: 1) { if let a = asm.push($0) { r.record(a, parameterSets: [], wallMicros: 0) } } }
        scanner.flush(atMicros: 2, reason: .endOfStream) { if let a = asm.push($0) { r.record(a, parameterSets: [], wallMicros: 0) } }
        if let a = asm.flush(atMicros: 2, reason: .endOfStream) { r.record(a, parameterSets: [], wallMicros: 0) }
        r.close()
        let stream = base + ".h264"
        let full = try #require(RecordingIndex.load(streamPath: stream))
        #expect(full.entries.count == aus.count)
        // Cut the stream in the middle of the last access unit, and tear the index's last line.
        let last = full.entries.last!
        truncate(stream, off_t(last.offset + last.size / 2))
        var idx = try Data(contentsOf: URL(fileURLWithPath: stream + ".idx"))
        idx.append(contentsOf: Array("123,45".utf8))
        try idx.write(to: URL(fileURLWithPath: stream + ".idx"))
        let repaired = try #require(RecordingIndex.load(streamPath: stream))
        #expect(repaired.entries.count == aus.count - 1)
        #expect(repaired.repaired == 2)
        let (hashes, _) = try replayHashes(stream)
        #expect(hashes == Array(try Fixtures.ffmpegFrameMD5(path).prefix(aus.count - 1)))
    }
}

/// A recording that cannot be written stops with a clear error and never stops live viewing.
@Suite struct RecorderFailureTests {
    @Test func unwritableRecordingPathKeepsPlaying() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-aud.h264"),
            "--display", "none", "--untimed", "--record", "/nonexistent/dir/flight"])
        #expect(rc != 0, "the failed recording shows in the exit status")
        #expect(err.contains("is not writable") && err.contains("playing without recording"), "\(err)")
        #expect(err.contains("30 frames decoded, 30 displayed"), "viewing went on: \(err)")
    }

    @Test func splitFilesEachStartAtAKeyframe() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("split-\(getpid())-\(UUID().uuidString)").path
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Fixtures.capture("test/h264-baseline.h264"),
            "--display", "none", "--untimed", "--record", base + ".h264", "--record-split-mb", "0.05"])
        #expect(rc == 0, "\(err)")
        // 52 KB per file on a 97 KB capture with IDRs at 0 and 30: two files, each self-starting.
        let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture("test/h264-baseline.h264"))
        var all: [Fixtures.FrameHash] = []
        for name in ["-000.h264", "-001.h264"] {
            #expect(err.contains("recording to \(base + name) (its timing index: \(base + name).idx)"), "it says where it writes: \(err)")
            let idx = try #require(RecordingIndex.load(streamPath: base + name), "\(name)")
            #expect(idx.entries.first?.keyframe ?? false, "\(name)")
            let r = try Harness.decodeFile(base + name)
            #expect(r.summary.decodeErrors == 0, "\(name)")
            all += r.hashes
        }
        #expect(all == expected, "the files together hold every picture")
        #expect(!FileManager.default.fileExists(atPath: base + "-002.h264"))
    }
}
