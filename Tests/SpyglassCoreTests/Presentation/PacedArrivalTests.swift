import Testing
@testable import SpyglassFeed
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// A paced file's pictures arrive when they are due: the wait for the pace is the file's timing,
/// not time the receiver added (a newcomer saw "receiver-added 167 ms · assembly 165 ms" on the
/// default capture, whose decode takes 2 ms).
@Suite struct PacedArrivalTests {
    @Test func aPacedPictureArrivesWhenItIsDue() throws {
        var o = ReceiverOptions()
        o.fps = 200   // paced, but quick
        let h = Harness(source: try StreamFDSource.file(path: Fixtures.capture("test/h264-baseline.h264")), options: o)
        h.start()
        let r = h.finish()
        #expect(r.timings.count == 45)
        let held = r.timings.dropFirst()   // the first picture is due at once
        #expect(held.allSatisfy { $0.firstByteMicros == $0.lastByteMicros && $0.lastByteMicros == $0.completeMicros },
                "each held picture's arrival and completion are its release")
        #expect(held.allSatisfy { $0.decodeStartMicros >= $0.completeMicros })
        #expect(zip(held, held.dropFirst()).allSatisfy { $0.lastByteMicros < $1.lastByteMicros }, "released one after another")
    }
}
