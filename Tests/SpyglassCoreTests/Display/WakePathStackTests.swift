import Foundation
import Testing
import CFFmpeg
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// The path a feed's thread takes for every picture it hands to a window (``WindowSink`` →
/// ``WakeTarget`` → the window's ``WakeSignal``) uses the same stack on the 200,000th picture
/// as on the 1,000th. It once grew by 32 bytes a call (a closure re-wrapped in a reabstraction
/// thunk on every read from its `Mutex`) and overflowed the feed's 4 MiB stack after about
/// 65,000 pictures (issue 17).
@Suite struct WakePathStackTests {
    private static func frame(_ i: Int) -> DecodedFrame {
        DecodedFrame(picture: DecodedPicture(frame: av_frame_alloc()!), index: i, accessUnitIndex: i, timing: FrameTiming(), damaged: false)
    }

    @Test func aWindowFeedsThreadKeepsAFlatStackOver200000Pictures() {
        let signal = WakeSignal()
        let target = WakeTarget()
        target.aim(at: signal)
        let probe = StackProbe(bytes: 1 << 20)
        let marks = Locked<(early: Int, late: Int, woken: Int)>((0, 0, 0))
        probe.run { probe in
            let slot = FrameSlot()
            let sink = WindowSink(slot: slot, metrics: MetricsRegistry(), latency: nil, wake: target)
            var woken = 0
            for i in 0..<201_000 {
                sink.consume(Self.frame(i))
                _ = slot.take()
                if signal.take(waitingUpTo: 0) { woken += 1 }
                if i == 999 { let m = probe.highWaterBytes(); marks.mutate { $0.early = m } }
            }
            let m = probe.highWaterBytes()
            marks.mutate { $0.late = m; $0.woken = woken }
        }
        let m = marks.get()
        #expect(m.woken == 201_000, "every picture woke the window")
        #expect(m.early > 0)
        #expect(m.late - m.early < 4096, "stack high-water \(m.early) bytes after 1,000 pictures, \(m.late) after 201,000")
    }

    @Test func aimingTheTargetAgainWakesOnlyTheNewWindow() {
        let first = WakeSignal(), second = WakeSignal()
        let target = WakeTarget()
        target.wake()
        target.aim(at: first)
        target.wake()
        target.aim(at: second)
        target.wake()
        target.aim(at: nil)
        target.wake()
        #expect(first.take(waitingUpTo: 0))
        #expect(!first.take(waitingUpTo: 0), "woken once")
        #expect(second.take(waitingUpTo: 0))
        #expect(!second.take(waitingUpTo: 0), "woken once")
    }
}
