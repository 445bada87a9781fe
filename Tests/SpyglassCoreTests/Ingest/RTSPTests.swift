import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest
import SpyglassTransport

/// RTSP (RFC 2326) from GStreamer's RTSP server (Debian's gst-rtsp-server, started by the tests
/// through tools/rtsp-server): every picture bit-exact with what the server's encoder wrote.
@Suite(.serialized) struct RTSPTests {
    static var available: Bool {
        FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/girepository-1.0/GstRtspServer-1.0.typelib")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    /// A server serving 45 pictures; stopped when the returned child is killed.
    static func server(_ extra: [String], ref: String) throws -> (Fixtures.Child, UInt16) {
        try startServer(["--frames", "45", "--ref", ref] + extra)
    }

    /// tools/rtsp-server with `arguments`, on a port the kernel chooses (`--port 0`): the port it
    /// says it listens on. A port chosen free beforehand could be bound by another test first.
    static func startServer(_ arguments: [String]) throws -> (Fixtures.Child, UInt16) {
        let child = try Fixtures.start("/usr/bin/python3", [Fixtures.root.appendingPathComponent("tools/rtsp-server").path,
                                                             "--port", "0"] + arguments)
        var port: UInt16?
        let said = Wait.until(timeoutSeconds: 30) {
            let err = (try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? ""
            port = err.split(separator: "\n").first { $0.hasPrefix("listening on port ") }.flatMap { UInt16($0.dropFirst(18)) }
            return port != nil || !child.process.isRunning
        }
        let err = (try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? ""
        try #require(said && port != nil, "the RTSP server says its port within 30 s: \(err)")
        return (child, port!)
    }

    static func refPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("rtsp-ref-\(getpid())-\(UUID().uuidString).es").path
    }

    /// Plays `url` until 2 s without data; returns what came out.
    static func play(_ url: String, transport: RTSPTransport) throws -> Harness.Result {
        var o = Harness.liveOptions(frames: 10_000)
        o.timeoutSeconds = 2
        o.rtspTransport = transport
        let source = try RTSPSource(url: try RTSPURL(parsing: url), transport: transport)
        o.sdp = source.sessionDescription
        let h = Harness(source: source, options: o)
        h.start()
        return h.finish()
    }

    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"), arguments: ["basic", "digest"])
    func authenticationWithTheRightAndAWrongPassword(scheme: String) throws {
        let ref = Self.refPath()
        let (server, port) = try Self.server(["--user", "pilot", "--password", "s3cret", "--auth", scheme], ref: ref)
        defer { server.process.terminate() }
        let r: Harness.Result
        do { r = try Self.play("rtsp://pilot:s3cret@127.0.0.1:\(port)/test", transport: .tcp) } catch {
            Issue.record("\(error); the server said: \((try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? "")")
            throw error
        }
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(ref)), "\(scheme): the right password plays")
        do {
            _ = try RTSPSource(url: try RTSPURL(parsing: "rtsp://pilot:wrong@127.0.0.1:\(port)/test"), transport: .tcp)
            Issue.record("a wrong password was accepted")
        } catch {
            #expect("\(error)".contains("wrong user or password for realm"), "\(error)")
        }
    }

    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"))
    func anUnknownPathIsAOneLineError() throws {
        let (server, port) = try Self.server([], ref: Self.refPath())
        defer { server.process.terminate() }
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "rtsp://127.0.0.1:\(port)/nothing", "--display", "none"])
        #expect(rc == 1)
        #expect(err.contains("DESCRIBE answered 404"), "\(err)")
    }

    /// A wall's camera that is down when the wall starts (issue 17): the feed says why it cannot
    /// reach it, keeps trying, and plays the camera bit-exact once it is up.
    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"), arguments: [RTSPTransport.udp, .tcp])
    func aCameraThatIsDownAtTheStartIsPlayedWhenItComesUp(transport: RTSPTransport) throws {
        let (first, port) = try Self.server([], ref: Self.refPath())
        first.process.terminate()
        first.process.waitUntilExit()
        let url = try RTSPURL(parsing: "rtsp://127.0.0.1:\(port)/test")
        let source = try RTSPSource(url: url, transport: transport, retryFirstConnection: true)
        #expect(source.connectionProblem?.contains("refused") == true, "\(source.connectionProblem ?? "no problem")")
        #expect(source.announcedSession == nil)
        var o = Harness.liveOptions(frames: 10_000)
        o.timeoutSeconds = nil
        o.rtspTransport = transport
        let h = Harness(source: source, options: o)
        h.start()
        defer { h.pipeline.stop(); _ = h.finish() }
        let connecting = Wait.until(timeoutSeconds: 30) {
            if case .connecting(let why) = h.pipeline.state { return why.contains("refused") }
            return false
        }
        #expect(connecting, "the feed says it cannot reach the camera: \(h.pipeline.state)")
        let ref = Self.refPath()
        let (server, _) = try Self.startServer(["--frames", "45", "--ref", ref, "--port", "\(port)"])
        defer { server.process.terminate() }
        #expect(h.waitForFrames(45, timeoutSeconds: 60), "\(h.framesSoFar) of 45 pictures once the camera is up")
        #expect(h.pipeline.state == .live)
        h.pipeline.stop()
        let r = h.finish()
        var expected: [Fixtures.FrameHash] = []
        _ = Wait.until(timeoutSeconds: 30) { expected = (try? Fixtures.ffmpegFrameMD5(ref)) ?? []; return expected.count >= 45 }
        #expect(r.hashes == expected, "\(transport): every picture equals the server's own")
        #expect(r.summary.rtp && r.summary.datagramsLost == 0)
    }

    /// Issue 22: a server that serves its video in MPEG-TS (`m=video … RTP/AVP 33`,
    /// `a=rtpmap:33 MP2T/90000`: gst-rtsp-server with mpegtsmux ! rtpmp2tpay, as encoders,
    /// SAT>IP servers and VLC do) is set up and demultiplexed as RTP/MP2T over UDP and TCP, every
    /// picture bit-exact with the server's encoder but the stream's last two: rtpmp2tpay holds the
    /// TS packets of a picture's end until the next picture's fill its RTP packet, and the last
    /// ones never go out.
    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"), arguments: [RTSPTransport.udp, .tcp])
    func anMPEGTSTrackIsPlayed(transport: RTSPTransport) throws {
        let ref = Self.refPath()
        let (server, port) = try Self.server(["--mux", "ts"], ref: ref)
        defer { server.process.terminate() }
        let r = try Self.play("rtsp://127.0.0.1:\(port)/test", transport: transport)
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        try #require(expected.count == 45)
        #expect(r.summary.tsPackets > 0 && r.summary.tsContinuityErrors == 0, "demultiplexed as MPEG-TS: \(r.summary.line)")
        #expect(r.hashes.count >= 43 && Array(r.hashes.prefix(43)) == Array(expected.prefix(43)), "\(transport): \(r.hashes.count) pictures")
    }

    /// Issue 22: `?track=` chooses the track by its place or its `a=control` (here between an
    /// H.264 and an MPEG-TS track of the same pictures), and `?pid=`/`?program=` choose within
    /// the TS; the server sees neither. Without `?track=` the H.264 track wins.
    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"),
          arguments: [("", false), ("?track=1", false), ("?track=2", true), ("?track=stream=1&pid=65", true), ("?program=1&track=2", true)])
    func trackChoosesBetweenAnH264AndAnMPEGTSTrack(query: String, mpegts: Bool) throws {
        let ref = Self.refPath()
        let (server, port) = try Self.server(["--mux", "both"], ref: ref)
        defer { server.process.terminate() }
        let url = try SourceURL(parsing: "rtsp://127.0.0.1:\(port)/test\(query)")
        guard case .rtsp(let u) = url.transport else { Issue.record("\(query): not RTSP: \(url)"); return }
        #expect(u.requestURL == "rtsp://127.0.0.1:\(port)/test", "the server sees none of our query items")
        var o = Harness.liveOptions(frames: 10_000)
        o.timeoutSeconds = 2
        o.mpegtsSelection = url.mpegtsSelection ?? MPEGTSSelection()
        let source = try RTSPSource(url: u, transport: .udp)
        o.sdp = source.sessionDescription
        let h = Harness(source: source, options: o)
        h.start()
        let r = h.finish()
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        try #require(expected.count == 45)
        #expect((r.summary.tsPackets > 0) == mpegts, "\(query): \(r.summary.line)")
        // The MP2T payloader holds each picture's last TS packets back (anMPEGTSTrackIsPlayed).
        let n = mpegts ? 43 : 45
        #expect(r.hashes.count >= n && Array(r.hashes.prefix(n)) == Array(expected.prefix(n)), "\(query): \(r.hashes.count) pictures")
    }

    static var vlcAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/cvlc") }

    /// Issue 22: VLC's own RTSP server with `#rtp{mux=ts,sdp=rtsp://…}`: one track `MP2T/90000`.
    /// VLC (as `nobody` when the tests run as root: VLC refuses root) streams a file of ffmpeg's
    /// libx264 (an IDR with SPS/PPS every 15 pictures), repeated, from its start, whether anyone
    /// watches or not; the pictures Spyglass shows are a run of that file's, each bit-exact.
    @Test(.enabled(if: vlcAvailable, "VLC is not installed: run tools/setup"), arguments: [RTSPTransport.udp, .tcp])
    func vlcsMPEGTSOverRTSPIsPlayed(transport: RTSPTransport) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vlc-rtsp-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        let clip = dir + "/clip.h264"
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2",
                                                               "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-pix_fmt", "yuv420p", clip])
        try #require(rc == 0, "\(err)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: clip)
        let port = try Sender.freeTCPPort()
        let vlc = ["/usr/bin/cvlc", "-I", "dummy", "--no-audio", clip, "--demux=h264", "--input-repeat", "50",
                   "--sout", "#rtp{mux=ts,sdp=rtsp://127.0.0.1:\(port)/test}", "--sout-keep"]
        let server = getuid() == 0 ? try Fixtures.start("/usr/sbin/runuser", ["-u", "nobody", "--", "/usr/bin/env", "HOME=\(dir)"] + vlc)
                                   : try Fixtures.start(vlc[0], Array(vlc.dropFirst()), environment: ["HOME": dir])
        defer { server.process.terminate() }
        try #require(Wait.until(timeoutSeconds: 30) { Fixtures.tcpPortIsListening(port) }, "VLC's RTSP server is up")
        var o = Harness.liveOptions(frames: 60)
        o.timeoutSeconds = 10
        let source = try RTSPSource(url: try RTSPURL(parsing: "rtsp://127.0.0.1:\(port)/test"), transport: transport)
        o.sdp = source.sessionDescription
        let h = Harness(source: source, options: o)
        h.start()
        let r = h.finish()
        let clipHashes = try Fixtures.ffmpegFrameMD5(clip)
        let looped = Array(repeating: clipHashes, count: 10).flatMap { $0 }
        let start = r.hashes.first.flatMap { first in looped.firstIndex { $0 == first } }
        #expect(r.summary.tsPackets > 0 && r.summary.tsContinuityErrors == 0, "\(transport): \(r.summary.line)")
        #expect(r.hashes.count == 60 && start.map { Array(looped[$0..<($0 + 60)]) == r.hashes } == true,
                "\(transport): the pictures are a run of the clip's")
    }

    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"))
    func aTrackThatIsNotThereIsNamedWithWhatIs() throws {
        let (server, port) = try Self.server(["--mux", "both"], ref: Self.refPath())
        defer { server.process.terminate() }
        do {
            _ = try RTSPSource(url: try RTSPURL(parsing: "rtsp://127.0.0.1:\(port)/test?track=3"), transport: .auto)
            Issue.record("track 3 opened")
        } catch {
            #expect("\(error)".contains("no track '3' (the server offers 1: video H264 (stream=0), 2: video MP2T (stream=1))"), "\(error)")
        }
        // ?program=/?pid= choose within MPEG-TS: they pick the MP2T track, and name a clash.
        guard case .rtsp(let u) = try SourceURL(parsing: "rtsp://127.0.0.1:\(port)/test?track=1&pid=65").transport else { return }
        do {
            _ = try RTSPSource(url: u, transport: .auto)
            Issue.record("?pid= on the H.264 track opened")
        } catch {
            #expect("\(error)".contains("choose within MPEG-TS, and the track played is H264"), "\(error)")
        }
        guard case .rtsp(let v) = try SourceURL(parsing: "rtsp://127.0.0.1:\(port)/test?pid=65").transport else { return }
        #expect(try RTSPSource(url: v, transport: .auto).sessionDescription.codec == nil, "the MP2T track, not the H.264 one")
    }

    /// Issue 22: a server that allows only one lower transport answers a SETUP for the other with
    /// 461 Unsupported Transport (RFC 2326 §11.4.8). Auto mode goes to TCP at once; TCP asked
    /// for goes to UDP; every picture bit-exact. UDP asked for of a TCP-only server is the 461.
    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"),
          arguments: [("tcp", RTSPTransport.auto), ("udp", .tcp)])
    func aServerThatRefusesOneTransportIsPlayedOverTheOther(allowed: String, asked: RTSPTransport) throws {
        let ref = Self.refPath()
        let (server, port) = try Self.server(["--protocols", allowed], ref: ref)
        defer { server.process.terminate() }
        let r = try Self.play("rtsp://127.0.0.1:\(port)/test", transport: asked)
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(ref)), "only \(allowed) allowed, \(asked) asked")
        #expect(r.summary.rtp && r.summary.datagramsLost == 0)
        if allowed == "tcp" {
            do {
                _ = try RTSPSource(url: try RTSPURL(parsing: "rtsp://127.0.0.1:\(port)/test"), transport: .udp)
                Issue.record("UDP asked of a TCP-only server was accepted")
            } catch {
                #expect("\(error)".contains("SETUP answered 461"), "\(error)")
            }
        }
    }

    /// Issue 19: a packet the server's payloader never sent (`--drop-rtp`, a test-only loss) is
    /// asked for with a PLI on the server's RTCP port (UDP) or the interleaved RTCP channel (TCP);
    /// gst-rtsp-server's rtpbin has its encoder answer with an IDR (an IDR only every 300
    /// pictures otherwise), and the picture is clean again after it.
    @Test(.enabled(if: available, "gst-rtsp-server is not installed: run tools/setup"), arguments: [RTSPTransport.udp, .tcp])
    func aLostPacketIsAnsweredWithAnIDR(transport: RTSPTransport) throws {
        let (server, port) = try Self.startServer(["--frames", "150", "--key-int", "300", "--drop-rtp", "60"])
        defer { server.process.terminate() }
        let r = try Self.play("rtsp://127.0.0.1:\(port)/test", transport: transport)
        let said = (try? String(contentsOfFile: server.errPath, encoding: .utf8)) ?? ""
        #expect(said.contains("dropped RTP packet 60"), "\(said)")
        #expect(r.summary.datagramsLost == 1 && r.summary.keyframeRequestsLoss >= 1, "\(transport): \(r.summary.line)")
        #expect(said.contains("PLI from SSRC") && said.contains("IDR on request"), "\(transport): the server heard the PLI and its encoder answered: \(said)")
        #expect(r.summary.recoveries >= 1, "clean again after the answer: \(r.summary.line)")
        #expect(r.hashes.count == 150)
        #expect(r.damaged.suffix(60).allSatisfy { !$0 }, "clean long before the next periodic IDR")
    }

    @Test func urlsKeepTheCamerasQueryAndTakeOutCredentials() throws {
        let u = try RTSPURL(parsing: "rtsp://admin:p%40ss@192.168.1.64:554/cam/realmonitor?channel=1&subtype=0")
        #expect(u.host == "192.168.1.64" && u.port == 554 && u.user == "admin" && u.password == "p@ss")
        #expect(u.requestURL == "rtsp://192.168.1.64:554/cam/realmonitor?channel=1&subtype=0")
        let v = try RTSPURL(parsing: "rtsp://192.168.144.25:8554/main.264")
        #expect(v.port == 8554 && v.requestURL == "rtsp://192.168.144.25:8554/main.264")
    }
}
