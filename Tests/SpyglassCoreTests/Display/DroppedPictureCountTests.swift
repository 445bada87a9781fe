import Testing
import CFFmpeg
@testable import SpyglassFeed
@testable import SpyglassDisplay

/// Every decoded picture is counted once: shown or dropped. A repair's newest picture is its
/// access unit's second picture (the first was shown or dropped already), so replacing it in the
/// window's slot drops nothing new (a newcomer read "decoded 3390" beside "displayed 3117 +
/// dropped 275").
@Suite struct DroppedPictureCountTests {
    private static func frame(_ i: Int, repairNewest: Bool = false) -> DecodedFrame {
        var f = DecodedFrame(picture: DecodedPicture(frame: av_frame_alloc()!), index: i, accessUnitIndex: i,
                             timing: FrameTiming(), damaged: false)
        f.isRepairNewest = repairNewest
        return f
    }

    @Test func aPictureReplacedInTheSlotIsDroppedOnceButARepairsNewestIsNot() {
        let metrics = MetricsRegistry()
        let slot = FrameSlot()
        let sink = WindowSink(slot: slot, metrics: metrics, latency: nil, wake: WakeTarget())
        sink.consume(Self.frame(0, repairNewest: true))
        sink.consume(Self.frame(1))
        #expect(metrics.count(.framesDropped) == 0, "the repair's newest picture was counted when first decoded")
        sink.consume(Self.frame(2))
        #expect(metrics.count(.framesDropped) == 1, "picture 1 was never shown")
        #expect(slot.take()?.index == 2)
    }

    @Test func theDamageFilterCountsWhatItHidesExceptARepairsNewest() {
        let metrics = MetricsRegistry()
        final class Nowhere: FrameSink { var got = 0; func consume(_ frame: DecodedFrame) { got += 1 } }
        let next = Nowhere()
        let filter = DamageFilter(showDamaged: false, metrics: metrics, latency: nil, next: next)
        var damaged = DecodedFrame(picture: DecodedPicture(frame: av_frame_alloc()!), index: 0, accessUnitIndex: 0,
                                   timing: FrameTiming(), damaged: true)
        filter.consume(damaged)
        #expect(metrics.count(.framesDropped) == 1 && next.got == 0)
        damaged.isRepairNewest = true
        filter.consume(damaged)
        #expect(metrics.count(.framesDropped) == 1, "not counted twice")
    }
}
