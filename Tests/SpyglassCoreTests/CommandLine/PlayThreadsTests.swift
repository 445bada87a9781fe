import Foundation
import Testing

/// Slice threads in `play`: one feed with several slices per picture gets two; with at least as
/// many feeds as cores no feed does (every core already decodes one).
@Suite struct PlayThreadsTests {
    static let slicedClip = Fixtures.capture("test/h264-high-4slices.h264")
    static let line = "slices per picture: decoding with 2 slice threads"

    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount >= 2, "one core: slice threads never help"))
    func oneFeedTakesSliceThreads() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", Self.slicedClip, "--display", "none", "--untimed"])
        #expect(rc == 0, "\(err)")
        #expect(err.contains(Self.line), "\(err)")
    }

    @Test func asManyFeedsAsCoresTakeNone() throws {
        let feeds = Array(repeating: Self.slicedClip, count: max(2, ProcessInfo.processInfo.activeProcessorCount))
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play"] + feeds + ["--display", "none", "--untimed", "--status", "0"])
        #expect(rc == 0, "\(err)")
        #expect(!err.contains(Self.line), "\(err)")
        #expect(err.components(separatedBy: "45 frames decoded").count == feeds.count + 1, "every feed decoded every picture: \(err)")
    }
}
