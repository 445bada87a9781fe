import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline

/// Decoded pictures equal `ffmpeg -f framemd5` for the same file, frame by frame.
@Suite struct BitExactDecodeTests {
    private func assertBitExact(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        #expect(expected.count > 0, "ffmpeg decoded nothing from \(name)", sourceLocation: sourceLocation)
        let got = try Harness.decodeFile(path)
        #expect(got.hashes.count == expected.count, "frame count for \(name)", sourceLocation: sourceLocation)
        #expect(got.hashes == expected, "framemd5 of \(name)", sourceLocation: sourceLocation)
        #expect(got.summary.decodeErrors == 0, sourceLocation: sourceLocation)
        #expect(got.summary.accessUnits == expected.count, "one access unit per picture in \(name)", sourceLocation: sourceLocation)
    }

    @Test func h264Baseline() throws { try assertBitExact("test/h264-baseline.h264") }
    @Test func h264MainWithBFrames() throws { try assertBitExact("test/h264-main-bframes.h264") }
    @Test func h264HighFourSlices() throws { try assertBitExact("test/h264-high-4slices.h264") }
    @Test func h265Main() throws { try assertBitExact("test/h265-main.h265") }
    @Test func h265Main10() throws { try assertBitExact("test/h265-main10.h265") }
    @Test func h265FourSlices() throws { try assertBitExact("test/h265-4slices.h265") }
    @Test func h264422() throws { try assertBitExact("test/h264-422.h264") }
    @Test func h264444TenBit() throws { try assertBitExact("test/h264-444-10bit.h264") }
    @Test func h264WithAUD() throws { try assertBitExact("test/h264-aud.h264") }
    @Test func h264IntraRefresh() throws { try assertBitExact("test/h264-intra-refresh.h264") }
    @Test func defaultCaptures() throws {
        try assertBitExact("default-720p30.h264")
        try assertBitExact("default-720p30.h265")
    }

    @Test func bFrameStreamReallyHasBFrames() throws {
        // Guards the test above: the Main capture must hold B slices (slice_type 1 or 6).
        let bytes = try Fixtures.bytes(Fixtures.capture("test/h264-main-bframes.h264"))
        var scanner = AnnexBScanner()
        var store = ParameterSetStore(codec: .h264)
        var bSlices = 0
        scanner.push(bytes, arrivalMicros: 0) { u in
            guard let h = NALUnitHeader(codec: .h264, bytes: u.bytes) else { return }
            if h.isParameterSet { store.store(header: h, unit: u.bytes) }
            if h.isVCL, let s = store.sliceInfo(header: h, unit: u.bytes).h264, s.sliceType % 5 == 1 { bSlices += 1 }
        }
        #expect(bSlices > 0)
    }

    @Test func codecIsDetectedFromNALHeaders() throws {
        for (name, codec) in [("test/h264-baseline.h264", "H.264"), ("test/h265-main.h265", "H.265")] {
            let r = try Harness.decodeFile(Fixtures.capture(name))
            #expect(r.summary.codec == codec, "\(name)")
        }
    }
}
