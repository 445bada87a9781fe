import XCTest
@testable import SpyglassCore

/// On a stream without B-frames, frame N leaves the decoder before access unit N+1 goes in.
final class ReorderDelayTests: XCTestCase {
    func testNoReorderDelayWithoutBFrames() throws {
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
                guard let unit = au else { return XCTFail("\(name): AU \(i) did not assemble") }
                let before = out
                decoder.decode(unit) { _ in out += 1 }
                if out != before + 1 { lateFrames += 1 }
            }
            XCTAssertEqual(lateFrames, 0, "\(name): frames held back for reordering")
            XCTAssertEqual(out, aus.count, name)
        }
    }

    func testBFrameStreamIsStillCompleteAndInOrder() throws {
        // With B-frames the decoder must reorder; the output still equals ffmpeg's.
        let name = "test/h264-main-bframes.h264"
        let r = try Harness.decodeFile(Fixtures.capture(name))
        XCTAssertEqual(r.hashes, try Fixtures.ffmpegFrameMD5(Fixtures.capture(name)))
    }
}
