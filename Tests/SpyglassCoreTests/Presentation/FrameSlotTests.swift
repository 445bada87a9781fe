import Foundation
import Testing
import CFFmpeg
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// ``FrameSlot``: the hand-off from the decode thread to the display, newest frame wins.
/// (``FrameSlot/wait(timeoutMicros:)`` is on its way out and not tested here.)
@Suite struct FrameSlotTests {
    /// A frame with no picture: an empty `AVFrame` is all the slot needs.
    private func frame(_ index: Int) -> DecodedFrame {
        DecodedFrame(picture: DecodedPicture(frame: av_frame_alloc()!), index: index, accessUnitIndex: index, timing: FrameTiming(), damaged: false)
    }

    @Test func aFramePutIntoAnEmptySlotReplacesNothingAndIsTaken() {
        let slot = FrameSlot()
        let a = frame(0)
        #expect(slot.put(a) == nil)
        #expect(slot.dropped == 0)
        #expect(slot.take()?.picture === a.picture)
        #expect(slot.take() == nil, "taken once")
    }

    @Test func theNewestFrameWinsAndTheReplacedOneIsReturnedAndCountedDropped() {
        let slot = FrameSlot()
        let a = frame(0), b = frame(1), c = frame(2)
        slot.put(a)
        #expect(slot.put(b)?.picture === a.picture)
        #expect(slot.dropped == 1)
        #expect(slot.put(c)?.picture === b.picture)
        #expect(slot.dropped == 2)
        #expect(slot.take()?.picture === c.picture)
    }

    @Test func takingFromAnEmptySlotGivesNothingAndDropsNothing() {
        let slot = FrameSlot()
        #expect(slot.take() == nil)
        slot.put(frame(0))
        _ = slot.take()
        #expect(slot.put(frame(1)) == nil, "the slot was emptied by the take")
        #expect(slot.dropped == 0)
    }

    /// The end of input: the slot says so, and the last frame put before it is still there for the
    /// display to show.
    @Test func closeMarksTheEndAndKeepsTheLastFrame() {
        let slot = FrameSlot()
        let last = frame(9)
        slot.put(last)
        #expect(!slot.isClosed)
        slot.close()
        #expect(slot.isClosed)
        #expect(slot.take()?.picture === last.picture)
        #expect(slot.dropped == 0)
    }

    /// A decode thread putting 2000 frames while a display thread takes what it can: every frame is
    /// either taken or counted dropped, and the display never sees an older frame after a newer one.
    @Test func underContentionEveryFrameIsTakenOrCountedAndOrderHolds() {
        let slot = FrameSlot()
        let total = 2000
        let taken = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let display = Thread {
            var seen: [Int] = []
            while true {
                if let f = slot.take() { seen.append(f.index); continue }
                if slot.isClosed {
                    // Everything was put before the close: one last look.
                    if let f = slot.take() { seen.append(f.index) }
                    break
                }
            }
            taken.set(seen)
            done.signal()
        }
        display.start()
        for i in 0..<total { slot.put(frame(i)) }
        slot.close()
        #expect(done.wait(timeout: .now() + 10) == .success, "the display thread ended within 10 s")
        let seen = taken.get()
        #expect(seen.count + slot.dropped == total, "taken \(seen.count), dropped \(slot.dropped)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "newer frames only")
        #expect(seen.last == total - 1, "the last frame put is the last one taken")
    }
}
