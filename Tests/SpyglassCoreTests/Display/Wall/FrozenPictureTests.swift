// A tile's frozen picture is kept at the window's size (issue 17: a 4K feed's last picture held
// 12 MB for as long as the wall ran), with real libavutil frames and libswscale.
import CFFmpeg
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline
@testable import SpyglassIngest

@MainActor @Suite struct FrozenPictureTests {
    /// A tile whose feed (not started) has shown one `width` x `height` picture with this sample
    /// aspect ratio.
    static func tileShowing(width: Int, height: Int, sar: (Int32, Int32) = (1, 1)) throws -> WallTile {
        let slot = FrameSlot()
        let p = Pipeline(id: 1, source: try UDPSource(host: "127.0.0.1", port: 0), options: ReceiverOptions(), sink: HeadlessSink(metrics: MetricsRegistry(), latency: nil))
        let tile = WallTile(WallFeed(pipeline: p, slot: slot, latency: nil, name: "4K", live: true))
        let frame = TilePrescalerTests.picture(width: width, height: height)
        frame.frame.pointee.sample_aspect_ratio = AVRational(num: sar.0, den: sar.1)
        _ = slot.put(frame)
        #expect(tile.takePicture())
        return tile
    }

    @Test func aPictureFrozenFor10SecondsIsKeptAtTheWindowsSize() throws {
        let tile = try Self.tileShowing(width: 3840, height: 2160, sar: (4, 3))
        let shown = MonotonicClock.nowMicros()
        tile.presented(renderStartMicros: shown, presentedMicros: shown)
        let taken = try #require(tile.lastPictureMicros)
        tile.shrinkFrozenPicture(nowMicros: taken + WallWindow.frozenPictureMicros - 1, frozenMicros: WallWindow.frozenPictureMicros, fitting: 1280, 720)
        #expect(tile.picture?.width == 3840, "not yet frozen for 10 s: kept whole")
        tile.shrinkFrozenPicture(nowMicros: taken + WallWindow.frozenPictureMicros, frozenMicros: WallWindow.frozenPictureMicros, fitting: 1280, 720)
        let still = try #require(tile.picture)
        #expect((still.width, still.height) == (1280, 720), "the window's size, the same shape")
        #expect(still.sampleAspectRatio == (4, 3), "the sample aspect ratio goes with it")
        #expect(TilePrescalerTests.near(TilePrescalerTests.luma(still.picture, 100, 360), 50), "the picture's own samples, left")
        #expect(TilePrescalerTests.near(TilePrescalerTests.luma(still.picture, 1180, 360), 200), "and right")
        #expect(tile.dirty, "drawn again from the still")
    }

    @Test func aPictureNotYetShownOrSmallerThanTheWindowIsLeftAlone() throws {
        let unshown = try Self.tileShowing(width: 3840, height: 2160)
        let t = try #require(unshown.lastPictureMicros)
        unshown.shrinkFrozenPicture(nowMicros: t + 60_000_000, frozenMicros: WallWindow.frozenPictureMicros, fitting: 1280, 720)
        #expect(unshown.picture?.width == 3840, "a picture not yet presented is never replaced")
        let small = try Self.tileShowing(width: 640, height: 360)
        small.presented(renderStartMicros: t, presentedMicros: t)
        let s = try #require(small.lastPictureMicros)
        small.shrinkFrozenPicture(nowMicros: s + 60_000_000, frozenMicros: WallWindow.frozenPictureMicros, fitting: 1280, 720)
        #expect(small.picture?.width == 640, "it already fits the window")
    }
}
