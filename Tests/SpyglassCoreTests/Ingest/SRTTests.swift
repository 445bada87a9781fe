import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// MPEG-TS over SRT with ffmpeg (built with libsrt) as the real peer: Spyglass calling an ffmpeg
/// listener, ffmpeg calling a Spyglass listener, a wrong passphrase, a listener that goes away
/// and comes back. Every picture is compared with ffmpeg's own decode of the file it sent.
@Suite(.serialized) struct SRTTests {
    /// ffmpeg sends `ts` in real time to `url` (its own SRT URL: latency in µs).
    static func ffmpegSend(_ ts: String, _ url: String) throws -> Fixtures.Child {
        try Fixtures.start("/usr/bin/ffmpeg", ["-v", "error", "-re", "-i", ts, "-c", "copy", "-f", "mpegts", url])
    }

    /// An ffmpeg SRT listener on a free port, bound before this returns.
    static func ffmpegListener(_ ts: String, passphrase: String? = nil, port: UInt16? = nil) throws -> (Fixtures.Child, UInt16) {
        let port = try port ?? Sender.freeUDPPort()
        let child = try ffmpegSend(ts, "srt://127.0.0.1:\(port)?mode=listener" + (passphrase.map { "&passphrase=\($0)" } ?? ""))
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "ffmpeg listens within 10 s")
        return (child, port)
    }

    /// Plays `source` until `frames` pictures, or with `toTheEnd` until no data has come for 2 s:
    /// a last picture cut by an idle gap is repaired only when the rest of it has come.
    static func play(_ source: sending SRTSource, frames: Int, toTheEnd: Bool = false) -> Harness.Result {
        var o = Harness.liveOptions(frames: frames, idleFlushMicros: 1_000)
        o.timeoutSeconds = 5
        if toTheEnd { o.maxFrames = nil; o.timeoutSeconds = 2 }
        let h = Harness(source: source, options: o)
        h.start()
        return h.finish()
    }

    @Test func spyglassCallsAnFFmpegListenerBitExact() throws {
        let ts = try MPEGTSTests.transportStream()
        let expected = try MPEGTSTests.expected(ts)
        let (ffmpeg, port) = try Self.ffmpegListener(ts)
        defer { ffmpeg.process.terminate() }
        let r = Self.play(try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)")), frames: expected.count)
        #expect(r.hashes == expected)
        #expect(r.summary.tsContinuityErrors == 0 && r.summary.datagramsLost == 0)
        let srt = try #require(r.summary.srt, "SRT's statistics are in the summary")
        #expect(srt.latencyMillis == SRTURL.defaultLatencyMillis && srt.packetsReceived > 0)
        #expect(r.summary.line.contains("SRT: RTT"))
    }

    @Test func anFFmpegCallerReachesASpyglassListenerBitExact() throws {
        let ts = try MPEGTSTests.transportStream()
        let expected = try MPEGTSTests.expected(ts)
        let port = try Sender.freeUDPPort()
        let source = try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?mode=listener&latency=250"))
        #expect(source.acceptsNextSender)
        let ffmpeg = try Self.ffmpegSend(ts, "srt://127.0.0.1:\(port)?mode=caller")
        defer { ffmpeg.process.terminate() }
        let r = Self.play(source, frames: expected.count)
        #expect(r.hashes == expected)
        #expect(r.summary.srt?.latencyMillis == 250, "?latency= is the receive latency, ms")
    }

    @Test func aWrongPassphraseIsOneClearError() throws {
        let ts = try MPEGTSTests.transportStream()
        let (ffmpeg, port) = try Self.ffmpegListener(ts, passphrase: "correct-horse")
        defer { ffmpeg.process.terminate() }
        #expect {
            _ = try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?passphrase=battery-staple"))
        } throws: { error in
            "\(error)".contains("wrong passphrase") && !"\(error)".contains("\n")
        }
        // The right one plays (the listener is still there: it refused only the handshake).
        let expected = try MPEGTSTests.expected(ts)
        let r = Self.play(try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?passphrase=correct-horse")), frames: expected.count)
        #expect(r.hashes == expected)
    }

    /// The command line says it in one line and exits non-zero.
    @Test func aWrongPassphraseOnTheCommandLine() throws {
        let ts = try MPEGTSTests.transportStream()
        let (ffmpeg, port) = try Self.ffmpegListener(ts, passphrase: "correct-horse")
        defer { ffmpeg.process.terminate() }
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "srt://127.0.0.1:\(port)?passphrase=battery-staple",
                                                                      "--display", "none", "--timeout", "5"], timeoutSeconds: 60)
        #expect(rc != 0)
        let lines = err.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("wrong passphrase (SRT_REJ_BADSECRET"), "\(err)")
    }

    /// `send` calling a receiver (ffmpeg, listening) with another passphrase: one line and a
    /// non-zero exit, not a retry every half second for ever (calling again cannot mend it).
    @Test func sendStopsWhenTheReceiverRefusesItsPassphrase() throws {
        let port = try Sender.freeUDPPort()
        let receiver = try Fixtures.start("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error",
                                                              "-i", "srt://127.0.0.1:\(port)?mode=listener&passphrase=correct-horse",
                                                              "-f", "null", "-"])
        defer { receiver.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "ffmpeg listens within 10 s")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "srt://127.0.0.1:\(port)?passphrase=battery-staple",
                                                                      "--duration", "600"], timeoutSeconds: 60)
        #expect(rc != 0, "\(err)")
        #expect(err.contains("refused this stream: wrong passphrase (SRT_REJ_BADSECRET"), "\(err)")
        #expect(!err.contains("battery-staple"), "the passphrase is never printed: \(err)")
    }

    /// The listener (the sender) goes away and a new one comes up on the same port: the caller
    /// shows reconnecting, connects again, and the second stream plays bit-exact.
    @Test func aCallerReconnectsWhenTheListenerComesBack() throws {
        let ts = try MPEGTSTests.transportStream(frames: 45)
        let expected = try MPEGTSTests.expected(ts)
        let (first, port) = try Self.ffmpegListener(ts)
        var o = Harness.liveOptions(frames: 2 * expected.count, idleFlushMicros: 1_000)
        o.timeoutSeconds = 20
        let h = Harness(source: try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)")), options: o)
        h.start()
        #expect(first.wait().0 == 0)
        #expect(Wait.until(timeoutSeconds: 20) { h.pipeline.state == .reconnecting }, "the feed shows reconnecting")
        let (second, _) = try Self.ffmpegListener(ts, port: port)
        defer { second.process.terminate() }
        let r = h.finish()
        #expect(r.hashes == expected + expected)
        #expect(r.summary.connections == 2 && r.summary.disconnects >= 1)
    }

    /// A listener that refused a caller's passphrase says so in one line and keeps waiting.
    @Test func aListenerSaysItRefusedACallersPassphrase() throws {
        let ts = try MPEGTSTests.transportStream()
        let port = try Sender.freeUDPPort()
        let spyglass = try Fixtures.start(Fixtures.spyglassBinary, ["play", "srt://:\(port)?passphrase=correct-horse",
                                                                    "--display", "none", "--timeout", "3"])
        defer { spyglass.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass listens within 10 s")
        let (rc, _, _) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", ts, "-c", "copy", "-f", "mpegts",
                                                              "srt://127.0.0.1:\(port)?passphrase=battery-staple"], timeoutSeconds: 60)
        #expect(rc != 0, "ffmpeg was refused")
        let (_, err) = spyglass.wait()
        let refused = err.split(separator: "\n").filter { $0.contains("refused") }
        #expect(refused.count == 1 && refused[0].contains("srt: a caller was refused") && refused[0].contains("Incorrect passphrase"), "\(err)")
        #expect(!err.contains("SRT.cn"), "libsrt's own log stays out of stderr")
    }

    /// A listener whose caller leaves takes the next one; both streams play bit-exact.
    @Test func aListenerAcceptsTheNextCaller() throws {
        let ts = try MPEGTSTests.transportStream(frames: 45)
        let expected = try MPEGTSTests.expected(ts)
        let port = try Sender.freeUDPPort()
        var o = Harness.liveOptions(frames: 2 * expected.count, idleFlushMicros: 1_000)
        o.timeoutSeconds = 20
        let h = Harness(source: try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?mode=listener")), options: o)
        h.start()
        let first = try Self.ffmpegSend(ts, "srt://127.0.0.1:\(port)?mode=caller")
        #expect(first.wait().0 == 0)
        #expect(Wait.until(timeoutSeconds: 20) { h.pipeline.state == .reconnecting }, "the feed shows it waits for the next caller")
        let second = try Self.ffmpegSend(ts, "srt://127.0.0.1:\(port)?mode=caller")
        defer { second.process.terminate() }
        let r = h.finish()
        #expect(r.hashes == expected + expected)
        #expect(r.summary.connections == 2)
    }

    /// ffmpeg calls a Spyglass listener through tools/impair (both ways: SRT's ACKs and NAKs come
    /// back), which drops 5 % of the packets on their way.
    static func playThroughLoss(latencyMillis: Int, loss: String, ts: String, frames: Int) throws -> Harness.Result {
        let port = try Sender.freeUDPPort()
        let source = try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?mode=listener&latency=\(latencyMillis)"))
        let proxy = Process()
        proxy.executableURL = Fixtures.root.appendingPathComponent("tools/impair")
        proxy.arguments = ["--listen", "0", "--to", "127.0.0.1:\(port)", "--loss", loss, "--seed", "7", "--bidirectional"]
        let out = Pipe()
        proxy.standardOutput = out
        try Fixtures.launch(proxy)
        defer { if proxy.isRunning { proxy.terminate() }; proxy.waitUntilExit() }
        let first = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        let json = try JSONSerialization.jsonObject(with: Data(first.prefix { $0 != "\n" }.utf8)) as? [String: Int]
        let proxyPort = try #require(json?["listening"], "tools/impair printed its port: \(first)")
        let ffmpeg = try Self.ffmpegSend(ts, "srt://127.0.0.1:\(proxyPort)?mode=caller&latency=\(latencyMillis * 1000)")
        defer { ffmpeg.process.terminate() }
        // To the end: under load ffmpeg's -re pacing can leave a gap inside the last picture, which
        // the idle flush cuts; its repair comes with the rest of that picture (a frame limit
        // stopped before it, leaving the cut picture as the last one).
        return Self.play(source, frames: frames, toTheEnd: true)
    }

    /// With 120 ms of latency SRT finds the lost packets missing and the sender retransmits them
    /// in time: SRT's statistics say so, and every picture is bit-exact.
    @Test func srtRetransmitsWhatALossyLinkDrops() throws {
        let ts = try MPEGTSTests.transportStream()
        let expected = try MPEGTSTests.expected(ts)
        let r = try Self.playThroughLoss(latencyMillis: 120, loss: "0.05", ts: ts, frames: expected.count)
        #expect(r.hashes == expected)
        let srt = try #require(r.summary.srt)
        #expect(srt.packetsLost > 0 && srt.packetsRetransmittedReceived > 0, "\(srt)")
    }

    /// With no latency at all a lost packet is given up as soon as the next one is due: SRT's
    /// drops are counted as loss, their TS gaps as continuity errors, their pictures damaged.
    @Test func srtDropsAreLoss() throws {
        let ts = try MPEGTSTests.transportStream()
        // Whether SRT gives a packet up depends on when the retransmission comes: on a loaded
        // machine a run can recover every one. Up to three runs, until one drops (the event).
        var r = try Self.playThroughLoss(latencyMillis: 0, loss: "0.1", ts: ts, frames: 10_000)
        for _ in 0..<2 where (r.summary.srt?.packetsDroppedReceiving ?? 0) == 0 {
            r = try Self.playThroughLoss(latencyMillis: 0, loss: "0.2", ts: ts, frames: 10_000)
        }
        let srt = try #require(r.summary.srt)
        #expect(srt.packetsDroppedReceiving > 0, "\(srt)")
        #expect(r.summary.datagramsLost == srt.packetsDroppedReceiving, "SRT's drops are the feed's loss")
        #expect(r.summary.tsContinuityErrors > 0 && r.summary.damagedAccessUnits > 0)
    }

    /// Issue 22: `streamid=` (MediaMTX's `read:cam1`, SRS's `#!::r=live/cam1,m=request`) is
    /// percent-decoded, shown, and at most 512 bytes; `pbkeylen=` is 16, 24 or 32.
    @Test func streamIDsAndKeyLengthsInTheURL() throws {
        let u = try SRTURL(parsing: "srt://mtx:8890?streamid=%23!::r=live/cam1,m=request&pbkeylen=32")
        #expect(u.streamID == "#!::r=live/cam1,m=request" && u.keyLength == 32)
        #expect(u.description.contains("streamid=#!::r=live/cam1,m=request"))
        #expect(try SRTURL(parsing: "srt://h:1?streamid=" + String(repeating: "y", count: 512)).streamID?.count == 512)
    }

    /// A listener with `?streamid=` takes only a caller that sends that stream id: `spyglass
    /// send` with another is refused in the handshake, once, with the reason (1403 forbidden),
    /// and with the right one plays; the listener names the caller's stream id.
    @Test func aListenerTakesOnlyItsStreamID() throws {
        let port = try Sender.freeUDPPort()
        let spyglass = try Fixtures.start(Fixtures.spyglassBinary, ["play", "srt://:\(port)?streamid=read:cam1", "--display", "none",
                                                                    "--timeout", "3"])
        defer { spyglass.process.terminate() }
        try #require(Wait.until { Fixtures.udpPortIsBound(port) }, "spyglass listens within 10 s")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "srt://127.0.0.1:\(port)?streamid=read:cam2",
                                                                      "--size", "320x240", "--duration", "5"], timeoutSeconds: 60)
        #expect(rc != 0 && err.contains("1403 forbidden"), "the wrong stream id is refused with the reason: \(err)")
        let (rc2, _, err2) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "srt://127.0.0.1:\(port)?streamid=read:cam1",
                                                                        "--size", "320x240", "--duration", "3"], timeoutSeconds: 60)
        #expect(rc2 == 0, "\(err2)")
        let (status, out) = spyglass.wait()
        #expect(status == 0 && out.contains("connected, stream id 'read:cam1'"), "\(out)")
        let decoded = out.split(separator: "\n").last { $0.contains("frames decoded") }
        #expect(decoded.map { !$0.contains(" 0 frames decoded") } == true, "the right stream id plays: \(out)")
    }

    /// GStreamer's srtsink as a listener that checks the stream id (tools/srt-server,
    /// `caller-connecting`): a caller with a wrong one is refused at once, one line, no retries.
    @Test func aGStreamerListenerRefusesAWrongStreamIDOnce() throws {
        let port = try Sender.freeUDPPort()
        let server = try Fixtures.start("/usr/bin/python3", [Fixtures.root.appendingPathComponent("tools/srt-server").path,
                                                             "--port", "\(port)", "--streamid", "read:cam1"])
        defer { server.process.terminate() }
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "the SRT listener is up")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "srt://127.0.0.1:\(port)?streamid=wrong", "--display", "none"],
                                            timeoutSeconds: 60)
        #expect(rc == 1 && err.split(separator: "\n").filter { $0.contains("error:") }.count == 1, "\(err)")
        let said = (try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? ""
        #expect(said.components(separatedBy: "stream id 'wrong' refused").count == 2, "one call, refused by the server's check: \(said)")
    }

    /// The same GStreamer listener with the right stream id: accepted, and every picture shown is
    /// one the encoder wrote, in order (a live pattern: the caller joins at a keyframe).
    @Test func aGStreamerListenerPlaysTheRightStreamIDBitExact() throws {
        let port = try Sender.freeUDPPort()
        let ref = FileManager.default.temporaryDirectory.appendingPathComponent("srt-gst-\(getpid())-\(UUID().uuidString).h264").path
        let server = try Fixtures.start("/usr/bin/python3", [Fixtures.root.appendingPathComponent("tools/srt-server").path,
                                                             "--port", "\(port)", "--streamid", "read:cam1", "--ref", ref, "--frames", "120"])
        defer { server.process.terminate() }
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.udpPortIsBound(port) }, "the SRT listener is up")
        // To the server's end (120 pictures, then EOS): it exits then, its --ref whole.
        let r = Self.play(try SRTSource(url: try SRTURL(parsing: "srt://127.0.0.1:\(port)?streamid=read:cam1")), frames: 0, toTheEnd: true)
        _ = server.wait(timeoutSeconds: 60)
        let said = (try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? ""
        #expect(said.contains("stream id 'read:cam1' accepted"), "\(said)")
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        let start = expected.firstIndex { $0 == r.hashes.first }
        #expect(r.hashes.count >= 60 && r.summary.tsContinuityErrors == 0, "\(r.summary.line)")
        #expect(start.map { Array(expected[$0..<min(expected.count, $0 + r.hashes.count)]) == r.hashes } == true,
                "the pictures are a run of the encoder's own")
    }

    @Test func urlDefaultsAndErrors() throws {
        let caller = try SRTURL(parsing: "srt://cam.local:9000")
        #expect(caller.mode == .caller && caller.latencyMillis == 20 && caller.passphrase == nil)
        let listener = try SRTURL(parsing: "srt://:9000?latency=120&passphrase=a%26b-secret-1")
        #expect(listener.mode == .listener && listener.host == nil && listener.latencyMillis == 120)
        #expect(listener.passphrase == "a&b-secret-1")
        #expect(listener.description == "srt://:9000?latency=120&passphrase=…", "the secret never reaches a log")
        #expect(try SRTURL(parsing: "srt://10.0.0.2:9000?mode=listener").mode == .listener)
        for bad in ["srt://:9000?mode=caller", "srt://h:9000?mode=rendezvous", "srt://h:9000?latency=-1",
                    "srt://h:9000?passphrase=short", "srt://h:9000?streamid=", "srt://h:9000?pbkeylen=15",
                    "srt://h:9000?streamid=" + String(repeating: "x", count: 513), "srt://h:0"] {
            #expect(throws: (any Error).self, "\(bad)") { try SourceURL(parsing: bad) }
        }
    }

    /// A passphrase never reaches an error line, whatever else in the URL is wrong.
    @Test func aPassphraseIsNeverPrinted() throws {
        for url in ["srt://:9000?passphrase=correct-horse&foo=1", "srt://:9000?passphrase=correct-horse&latency=x"] {
            for command in [["play", url, "--display", "none"], ["send", "pattern", url, "--duration", "1"]] {
                let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, command)
                #expect(rc != 0)
                #expect(!err.contains("correct-horse") && err.contains("passphrase=…"), "\(command[0]): \(err)")
            }
        }
        #expect(SRTURL.redacting("srt://h:1?mode=caller&passphrase=a&b=c&passphrase=d") == "srt://h:1?mode=caller&passphrase=…&b=c&passphrase=…")
    }

    @Test func srtStatisticsAreGaugesAndCounters() {
        let m = MetricsRegistry()
        var l = SRTStatistics()
        l.roundTripMillis = 1.5
        l.latencyMillis = 20
        m.setSRT(l)
        let text = MetricsExposition.text([FeedMetrics(feed: "1 srt://:9000", state: .live, snapshot: m.snapshot())], nowMicros: 0)
        #expect(text.contains("spyglass_srt_rtt_seconds{feed=\"1 srt://:9000\"} 0.0015"))
        #expect(text.contains("spyglass_srt_latency_seconds{feed=\"1 srt://:9000\"} 0.02"))
        #expect(text.contains("spyglass_srt_packets_dropped_total"))
        let none = MetricsExposition.text([FeedMetrics(feed: "1 udp://:5600", state: .live, snapshot: MetricsRegistry().snapshot())], nowMicros: 0)
        #expect(!none.contains("spyglass_srt_rtt_seconds"), "no SRT gauges without an SRT feed")
    }
}
