import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// On a stream without B-frames, frame N leaves the decoder before access unit N+1 goes in.
@Suite struct ReorderDelayTests {
    @Test func noReorderDelayWithoutBFrames() throws {
        for (name, codec) in [("test/h264-baseline.h264", VideoCodec.h264), ("test/h264-high-4slices.h264", .h264),
                              ("test/h264-novui-timing.h264", .h264),
                              ("test/h265-main.h265", .h265), ("default-720p30.h265", .h265)] {
            let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture(name)))
            let decoder = try VideoDecoder(codec: codec)
            var scanner = AnnexBScanner()
            var asm = AccessUnitAssembler(codec: codec)
            var lateFrames = 0
            var out = 0
            for (i, bytes) in aus.enumerated() {
                var au: AccessUnit?
                scanner.push(bytes, arrivalMicros: 0) { u in if let a = asm.push(u) { au = a } }
                scanner.flush(atMicros: 0, reason: .endOfStream) { u in if let a = asm.push(u) { au = a } }
                if au == nil { au = asm.flush(atMicros: 0, reason: .idleGap) }
                guard let unit = au else { Issue.record("\(name): AU \(i) did not assemble"); return }
                let before = out
                decoder.decode(unit) { _ in out += 1 }
                if out != before + 1 { lateFrames += 1 }
            }
            #expect(lateFrames == 0, "\(name): frames held back for reordering")
            #expect(out == aus.count, "\(name)")
        }
    }

    @Test func bFrameStreamIsStillCompleteAndInOrder() throws {
        // With B-frames the decoder must reorder; the output still equals ffmpeg's.
        let name = "test/h264-main-bframes.h264"
        let r = try Harness.decodeFile(Fixtures.capture(name))
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(Fixtures.capture(name))))
    }
}

/// Per-NAL decoding (H.264, `AV_CODEC_FLAG2_CHUNKS`) gives the same pictures as whole-AU decoding.
@Suite struct PerNALDecodeTests {
    @Test func perNALEqualsWholeAccessUnitOnEveryCapture() throws {
        let dir = Fixtures.root.appendingPathComponent("captures")
        var files: [String] = []
        for sub in ["", "test", "cases"] {
            let d = sub.isEmpty ? dir : dir.appendingPathComponent(sub)
            for f in try FileManager.default.contentsOfDirectory(atPath: d.path) where f.hasSuffix(".h264") || f.hasSuffix(".h265") {
                files.append(d.appendingPathComponent(f).path)
            }
        }
        #expect(files.count > 15)
        for path in files.sorted() {
            let whole = try Harness.decodeFile(path) { $0.decodeMode = .accessUnit }
            let perNAL = try Harness.decodeFile(path) { $0.decodeMode = .nal }
            #expect(whole.hashes.count > 0, "\(path)")
            #expect(perNAL.hashes == whole.hashes, "\(path)")
            #expect(perNAL.summary.decodeErrors == 0, "\(path)")
        }
    }

    @Test func perNALFrameLeavesWithItsLastSlice() throws {
        // 4 slices per picture: frame N is out before the first unit of AU N+1 is decoded.
        let path = Fixtures.capture("test/h264-high-4slices.h264")
        let decoder = try VideoDecoder(codec: .h264, perNAL: true)
        var scanner = AnnexBScanner()
        var units: [NALUnit] = []
        scanner.push(try Fixtures.bytes(path), arrivalMicros: 0) { units.append($0) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0) }
        var asm = AccessUnitAssembler(codec: .h264)
        var framesOut = 0
        var lateFrames = 0
        for u in units {
            let before = asm.counters.accessUnits
            _ = asm.push(u)
            if asm.counters.accessUnits > before && framesOut < asm.counters.accessUnits { lateFrames += 1 }
            let h = NALUnitHeader(codec: .h264, bytes: u.bytes)!
            decoder.decode(unit: u, accessUnitIndex: asm.counters.accessUnits, isParameterSet: h.isParameterSet) { _ in framesOut += 1 }
        }
        #expect(lateFrames == 0)
        #expect(framesOut == (try Fixtures.ffmpegFrameMD5(path).count))
    }
}

/// A live stream whose VUI claims another frame rate than it is sent at is never paced by it.
@Suite struct WrongFrameRateTests {
    /// h264-fps25 with its VUI timing rewritten to 1 fps (ffmpeg's h264_metadata), sent at 60 fps.
    /// Held to the VUI rate, its 20 frames would take 19 s; live input is never paced, so all of
    /// them are out within a 10 s deadline, each equal to ffmpeg's. (No time is compared: the
    /// rate is chosen so that pacing cannot fit in the deadline on any machine.)
    @Test func liveLatencyDoesNotFollowAWrongVUIRate() throws {
        let slow = FileManager.default.temporaryDirectory.appendingPathComponent("fps1-\(ProcessInfo.processInfo.processIdentifier).h264").path
        defer { try? FileManager.default.removeItem(atPath: slow) }
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", Fixtures.capture("test/h264-fps25.h264"),
            "-c", "copy", "-bsf:v", "h264_metadata=tick_rate=2/1", "-f", "h264", "-y", slow])
        #expect(rc == 0, "\(err)")
        let format = try #require(Harness.decodeFile(slow).summary.format)
        #expect(format.hasSuffix(" 1.000 fps"), "the VUI now says 1 fps: \(format)")
        let expected = try Fixtures.ffmpegFrameMD5(slow)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(slow))
        #expect(aus.count == expected.count)
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let boundPort = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: aus.count, idleFlushMicros: 1_000))
        h.start()
        Sender.udp(port: boundPort, datagrams: aus, pauseMicros: { $0 == 0 ? 0 : 16_667 })   // pacing: the sender's 60 fps
        let allOut = h.waitForFrames(aus.count, timeoutSeconds: 10)
        if !allOut { h.pipeline.stop() }
        let r = h.finish()
        #expect(allOut, "\(r.hashes.count) of \(aus.count) frames out within 10 s: held to the VUI's 1 fps?")
        #expect(r.hashes == expected)
    }
}
