import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// A stream whose SPS changes size mid-stream decodes every frame at its own size.
@Suite struct ResolutionChangeTests {
    private func check(_ name: String, sizes expectedSequence: [String]) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let probeSizes = try Fixtures.ffprobeFrameSizes(path)
        let got = try Harness.decodeFile(path)
        #expect(got.hashes == expected, "\(name)")
        #expect(got.sizes == probeSizes, "every frame at the size ffprobe reports")
        // The size sequence, collapsed, is the one the stream was made with.
        var runs: [String] = []
        for s in got.sizes where runs.last != s { runs.append(s) }
        #expect(runs == expectedSequence)
        #expect(got.summary.decodeErrors == 0)
        #expect(got.summary.parameterSetChanges.count == 2, "two SPS changes logged: \(got.summary.parameterSetChanges)")
    }

    @Test func h264SizeChanges() throws {
        try check("test/h264-reschange.h264", sizes: ["640x360", "1280x720", "640x360"])
    }

    @Test func h265SizeChanges() throws {
        try check("test/h265-reschange.h265", sizes: ["320x240", "640x360", "320x240"])
    }
}
