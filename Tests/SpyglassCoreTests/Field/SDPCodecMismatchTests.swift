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
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// An SDP whose codec is not the stream's (a stale `cam.sdp` after the camera was switched from
/// H.265 to H.264, or the reverse): the stream is followed, with one warning naming both, and the
/// SDP's parameter sets of the other codec are not used.
@Suite struct SDPCodecMismatchTests {
    /// ffmpeg's own SDP for `capture`, written by its RTP muxer (`-sdp_file`) while it sends one
    /// frame to the discard port.
    static func ffmpegSDP(of capture: String, name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sdp-\(name)-\(getpid()).sdp").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", capture, "-c", "copy", "-frames:v", "1",
                                                                "-f", "rtp", "-sdp_file", path, "rtp://127.0.0.1:9"])
        #expect(rc == 0, "\(err)")
        return path
    }

    /// ffmpeg sends `stream` as RTP while the receiver holds the SDP ffmpeg wrote for `sdpOf`
    /// (the other codec, with its real `sprop-*` sets): every picture is ffmpeg's, bit-exact, and
    /// the mismatch is counted once.
    @Test(arguments: [("test/h264-baseline.h264", "test/h265-main.h265"), ("test/h265-main.h265", "test/h264-baseline.h264")])
    func anSDPNamingTheOtherCodecIsOverruledByTheStream(stream: String, sdpOf: String) throws {
        let capture = Fixtures.capture(stream)
        let expected = try Fixtures.ffmpegFrameMD5(capture)
        let sdpPath = try Self.ffmpegSDP(of: Fixtures.capture(sdpOf), name: (sdpOf as NSString).lastPathComponent)
        defer { try? FileManager.default.removeItem(atPath: sdpPath) }
        let sdp = try SessionDescription(path: sdpPath)
        let streamCodec: VideoCodec = stream.hasSuffix(".h264") ? .h264 : .h265
        #expect(sdp.codec != nil && sdp.codec != streamCodec, "the SDP names the other codec")
        #expect(!sdp.parameterSets.isEmpty, "and carries that codec's parameter sets")

        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: expected.count)
        o.sdp = sdp
        o.timeoutSeconds = 5
        let h = Harness(source: udp, options: o)
        h.start()
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-re", "-i", capture, "-c", "copy",
                                                                "-f", "rtp", "rtp://127.0.0.1:\(port)"])
        #expect(rc == 0, "\(err)")
        let r = h.finish()
        #expect(r.hashes == expected, "every picture, bit-exact with ffmpeg")
        #expect(r.summary.codec == streamCodec.displayName)
        #expect(r.summary.codecMismatches == 1, "the warning is counted once")
        #expect(r.summary.decodeErrors == 0)
        #expect(r.summary.line.contains("the named codec was not the stream's"))
    }

    // MARK: - the parts, byte by byte

    /// An H.264 SPS (Baseline, `profile_idc` 66) and PPS, and an H.265 VPS and SPS, as NAL units.
    static let h264SPS: [UInt8] = [0x67, 0x42, 0xC0, 0x0D, 0xDA, 0x05, 0x07, 0xEC]
    static let h264PPS: [UInt8] = [0x68, 0xCE, 0x0F, 0xC8]
    static let h265VPS: [UInt8] = [0x40, 0x01, 0x0C, 0x01, 0xFF, 0xFF, 0x01, 0x60]
    static let h265SPS: [UInt8] = [0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03]

    /// RFC 6184 §5.7.1 STAP-A / RFC 7798 §4.4.2 AP: header, then 16-bit size + unit, repeated.
    static func aggregate(header: [UInt8], _ units: [[UInt8]]) -> [UInt8] {
        header + units.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
    }

    @Test func aParameterSetFirstInAPayloadIsDecisive() {
        #expect(RTPCodecDetector.decisiveParameterSet(Self.h264SPS[...]) == .h264)
        #expect(RTPCodecDetector.decisiveParameterSet(Self.h265VPS[...]) == .h265)
        #expect(RTPCodecDetector.decisiveParameterSet(Self.aggregate(header: [0x78], [Self.h264SPS, Self.h264PPS])[...]) == .h264)
        #expect(RTPCodecDetector.decisiveParameterSet(Self.aggregate(header: [0x60, 0x01], [Self.h265VPS, Self.h265SPS])[...]) == .h265)
        // Not parameter sets: an H.264 FU-A, an H.265 FU, a STAP-A of slices, an H.264 PPS alone
        // (its header proves nothing), too short.
        #expect(RTPCodecDetector.decisiveParameterSet([0x7C, 0x85, 0x88, 0x84, 0x00][...]) == nil)
        #expect(RTPCodecDetector.decisiveParameterSet([0x62, 0x01, 0x93, 0xAF, 0x00][...]) == nil)
        #expect(RTPCodecDetector.decisiveParameterSet(Self.aggregate(header: [0x78], [[0x65, 0x88, 0x84, 0x00]])[...]) == nil)
        #expect(RTPCodecDetector.decisiveParameterSet(Self.h264PPS[...]) == nil)
        #expect(RTPCodecDetector.decisiveParameterSet([0x67, 0x42][...]) == nil)
    }

    /// The RTP layer told H.265 (as an SDP would) switches its payload rules at an H.264 STAP-A
    /// holding an SPS: the units come out whole, as H.264 units.
    @Test func theRTPLayerFollowsAParameterSetOfTheOtherCodec() {
        var r = RTPReceiver(codec: .h265, payloadType: 96)
        var units: [[UInt8]] = []
        let stap = RTPPacket.build(marker: false, payloadType: 96, sequenceNumber: 1, timestamp: 0, ssrc: 5,
                                   payload: Self.aggregate(header: [0x78], [Self.h264SPS, Self.h264PPS]))
        r.push(stap, arrivalMicros: 1) { if case .unit(let u) = $0 { units.append(u.bytes) } }
        #expect(r.codec == .h264)
        #expect(r.counters.codecSwitches == 1)
        #expect(units == [Self.h264SPS, Self.h264PPS])
        #expect(r.counters.payload.malformed + r.counters.payload.unsupported == 0)
    }

    /// The stage holding an H.265 SDP gets H.264 units: it decodes H.264, says so once, and
    /// hands none of the SDP's H.265 sets to the H.264 assembler.
    @Test func theStageFollowsTheStreamAgainstAnSDPAndSaysItOnce() {
        var o = ReceiverOptions()
        o.sdp = SessionDescription(text: "m=video 5000 RTP/AVP 96\na=rtpmap:96 H265/90000\n")
        o.sdp!.parameterSets = [Self.h265VPS, Self.h265SPS]
        var stage = AccessUnitStage(settings: o.assembly)
        var events: [AccessUnitStage.Event] = []
        for u in [Self.h264SPS, Self.h264PPS, Self.h264SPS] {
            stage.push(NALUnit(bytes: u), codecHint: .h264) { events.append($0) }
        }
        #expect(stage.codec == .h264)
        let mismatches = events.compactMap { e -> String? in
            if case .codecMismatch(let named, let by, let stream, let following) = e { return "\(named) \(by) \(stream) \(following)" }
            return nil
        }
        #expect(mismatches == ["h265 the SDP h264 true"])
        #expect(stage.parameterSets?.vps.isEmpty ?? true, "no H.265 VPS in an H.264 store")
    }

    /// `--codec` is authoritative: the stage keeps it and says once that the stream disagrees.
    @Test func aForcedCodecIsKeptAndTheMismatchSaid() {
        var o = ReceiverOptions()
        o.codec = .h265
        var stage = AccessUnitStage(settings: o.assembly)
        var following: [Bool] = []
        for u in [Self.h264SPS, Self.h264PPS, Self.h264SPS] {
            stage.push(NALUnit(bytes: u), codecHint: .h264) { e in
                if case .codecMismatch(_, _, _, let f) = e { following.append(f) }
            }
        }
        #expect(stage.codec == .h265)
        #expect(following == [false])
    }

    @Test func anSDPHandsOutOnlyTheParameterSetsOfTheCodecAsked() {
        var sdp = SessionDescription(text: "a=rtpmap:96 H265/90000\n")
        sdp.parameterSets = [Self.h265VPS, Self.h265SPS, Self.h264SPS, Self.h264PPS, [0x65, 0x88]]
        #expect(sdp.parameterSets(for: .h265) == [Self.h265VPS, Self.h265SPS])
        #expect(sdp.parameterSets(for: .h264) == [Self.h264SPS, Self.h264PPS])
    }
}
