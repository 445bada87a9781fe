import Testing
@testable import SpyglassCore

/// The headless status line: what it says about a feed.
@Suite struct FeedStatusLineTests {
    @Test func aLiveFeedWithCaptureStamps() {
        #expect(FeedStatusLine.text(feed: 2, name: "cam2", state: .live, fps: 29.94, ageSeconds: 0.031, glassToGlassP50Millis: 84.2)
                == "2 cam2 · live · 29.9 fps · age 0.03 s · g2g p50 84 ms")
    }

    @Test func aFeedWithNoPictureYet() {
        #expect(FeedStatusLine.text(feed: 1, name: "udp://:5600", state: .waitingForData, fps: 0, ageSeconds: nil, glassToGlassP50Millis: nil)
                == "1 udp://:5600 · waiting for data · 0.0 fps")
    }
}
