import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassPipeline
@testable import SpyglassTransport
@testable import SpyglassBitstream
@testable import SpyglassIngest

/// Capture times from an RTP header extension written by GStreamer: RFC 6051's NTP-64
/// (rtph264pay with rtphdrextntp64, tools/rtp-ntp64-camera), read in the RFC 8285 one-byte form
/// with the id of the SDP's `a=extmap` or `--rtp-ext`.
@Suite(.serialized, .enabled(if: RTCPCaptureTimeTests.available, "GStreamer is not installed: run tools/setup"))
struct RTPCaptureExtensionTests {
    /// Starts the camera, aimed at 127.0.0.1:`port`, sending `frames` pictures.
    static func camera(port: UInt16, frames: Int, _ extra: [String]) throws -> Fixtures.Child {
        try Fixtures.start(Fixtures.root.appendingPathComponent("tools/rtp-ntp64-camera").path,
                           ["--spyglass", Fixtures.spyglassBinary, "--to", "127.0.0.1:\(port)", "--frames", "\(frames)",
                            "--ext-id", "3"] + extra)
    }

    static func temporary(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ntp64-\(getpid())-\(UUID().uuidString)\(suffix)").path
    }

    /// Each picture's capture time from the extension and from its ST 0604 SEI, side by side:
    /// the datagrams as they arrived on a real socket, through the RTP depacketizer.
    @Test func theExtensionAgreesWithTheSEIStampOfEachPicture() throws {
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        defer { source.close() }
        let sdpPath = Self.temporary(".sdp")
        let cam = try Self.camera(port: source.boundPort, frames: 90, ["--sdp", sdpPath])
        defer { cam.process.terminate() }
        var datagrams: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var quiet = 0
        // Until the camera has sent its 90 pictures and gone quiet for 2 s (or a minute in all).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && (datagrams.isEmpty || quiet < 20) {
            let e = try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: 100_000) }
            if case .data(let n, _, _) = e { datagrams.append(Array(buffer.prefix(n))); quiet = 0 } else { quiet += 1 }
        }
        var settings = DepacketizerSettings()
        settings.sdp = try SessionDescription(path: sdpPath)
        #expect(settings.sdp?.captureTimeExtension == CaptureTimeExtension(kind: .ntp64, id: 3), "the SDP's a=extmap")
        var d = RTPStreamDepacketizer(settings: settings)
        var pictures: [(ext: UInt64?, sei: UInt64?)] = [(nil, nil)]
        for (i, g) in datagrams.enumerated() {
            g.withUnsafeBytes { raw in
                d.push(raw, arrivalMicros: UInt64(i), truncated: false) { e in
                    switch e {
                    case .captureTime(let w, .rtpExtension): pictures[pictures.count - 1].ext = w
                    case .unit(let u) where u.bytes.first.map({ $0 & 0x1F == 6 }) == true:
                        if let t = SEIFacts(unit: u.bytes, codec: .h264)?.captureWallMicros { pictures[pictures.count - 1].sei = t }
                    case .accessUnitEnd: pictures.append((nil, nil))
                    default: break
                    }
                }
            }
        }
        let both = pictures.compactMap { p in p.ext.flatMap { e in p.sei.map { Int64(bitPattern: e &- $0) } } }
        #expect(both.count >= 85, "\(both.count) of \(pictures.count - 1) pictures have both stamps (\(datagrams.count) datagrams)")
        let spread = both.map { abs($0) }.sorted()
        // Issue 22 asks for 1 ms at the median; both come from one capture instant here, and the
        // NTP fraction is read to the nearest µs: equal.
        #expect(spread.isEmpty || spread[spread.count / 2] <= 1_000, "p50 within 1 ms of the SEI")
        #expect((spread.last ?? .max) == 0, "every picture equal to its SEI to the µs: largest \(spread.last ?? -1) µs")
    }

    /// With no SEI in the stream, the extension is the capture clock: from the SDP or from
    /// `--rtp-ext`, and every picture is still the one the encoder wrote.
    @Test(arguments: ["sdp", "option"])
    func withoutSEITheExtensionIsTheCaptureClock(namedBy: String) throws {
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let ref = Self.temporary(".h264"), sdpPath = Self.temporary(".sdp")
        // Until 55 pictures (the camera sends 60); the camera takes seconds to start.
        var o = Harness.liveOptions(frames: 55)
        o.timeoutSeconds = 30
        o.transport = .rtp
        let r: Harness.Result
        if namedBy == "option" {
            o.captureExtension = CaptureTimeExtension(argument: "3=ntp-64")
            let h = Harness(source: source, options: o)
            h.start()
            let cam = try Self.camera(port: source.boundPort, frames: 60, ["--strip-sei", "--ref", ref])
            r = h.finish()
            _ = cam.wait(timeoutSeconds: 60)   // its --ref is whole once it has exited
        } else {
            // The SDP is written before the camera sends: the receiver is told it first.
            let cam = try Self.camera(port: source.boundPort, frames: 60, ["--strip-sei", "--ref", ref, "--sdp", sdpPath])
            try #require(Wait.until(timeoutSeconds: 30) {
                ((try? String(contentsOfFile: sdpPath, encoding: .utf8)) ?? "").contains("a=extmap")
            })
            o.sdp = try SessionDescription(path: sdpPath)
            let h = Harness(source: source, options: o)
            h.start()
            r = h.finish()
            _ = cam.wait(timeoutSeconds: 60)
        }
        let timed = r.timings.filter { $0.captureSource == .rtpExtension }
        #expect(timed.count == r.timings.count && timed.count > 0, "\(namedBy): every picture has the extension's capture time")
        // The capture clock (glass-to-glass) takes them as they are: a capture before arrival,
        // on this machine's clock, as the sender stamped it.
        var clock = CaptureClock()
        let offset = Int64(bitPattern: MonotonicClock.wallMicros()) - Int64(bitPattern: MonotonicClock.nowMicros())
        for t in timed {
            let arrival = UInt64(Int64(t.lastByteMicros) + offset)
            #expect(clock.judge(captureWallMicros: t.captureWallMicros, arrivalWallMicros: arrival, origin: .rtpExtension).source == .rtpExtension)
        }
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        #expect(r.hashes.count == 55 && r.hashes == Array(expected.prefix(r.hashes.count)), "\(r.hashes.count) of \(expected.count)")
    }
}
