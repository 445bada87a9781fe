import CSystem
import Foundation
import Synchronization

/// How the process's memory goes back to the system once Spyglass frees it (issue 17).
///
/// glibc's malloc raises its mmap threshold to the size of each large block freed (up to 32 MiB),
/// so after the first 4K picture buffer goes, the next ones are carved from the feed thread's
/// arena, and freeing them returns nothing: a 4K HEVC stream's decoder, closed after the stream
/// ended, left RSS at 163 MB instead of 43 MB. A fixed threshold (`M_MMAP_THRESHOLD`, mallopt(3):
/// setting it turns the dynamic adjustment off) gives every block of ``mmapThresholdBytes`` or more
/// its own mapping, unmapped on free; measured: 163 → 73 MB. A trim after a big free
/// (``giveBackFreedMemory()``) returns the smaller blocks freed with it, and a housekeeping thread
/// (``startHousekeeping(intervalMillis:)``) does the same every 30 s for what the feed threads'
/// arenas keep.
public enum MemoryPolicy {
    /// Blocks at least this large get their own mapping, bytes (256 KiB: picture planes of
    /// 640x360 and up, access units of 4K streams; libavcodec's pools reuse them, so they are
    /// mapped about once per format, not per picture).
    public static let mmapThresholdBytes: Int32 = 256 << 10

    /// Sets the fixed mmap threshold. Once, at process start, before the feeds run.
    public static func install() {
        _ = spy_malloc_set_mmap_threshold(mmapThresholdBytes)
    }

    /// Returns freed heap pages of every arena to the system (malloc_trim(3)): after a big free,
    /// such as a decoder closed, never on the hot path (0.3 ms to 2 ms a call measured here).
    public static func giveBackFreedMemory() {
        if spy_malloc_trim() == 1 { trimsThatReturnedMemory.add(1, ordering: .relaxed) }
        trims.add(1, ordering: .relaxed)
    }

    /// How often the housekeeping thread trims, ms. glibc keeps what a feed thread frees in that
    /// thread's arena (64 MiB each on 64-bit) and only gives back the top of the main heap by
    /// itself; smaps of a 16-minute 7-feed soak (docs/soak/smaps-2026-12-03.csv) put all of the
    /// RSS growth in those arenas while the live heap stayed flat. 30 s keeps the cost (0.3 ms to
    /// 2 ms a trim, arena locks held one at a time) under 0.01 % of one core.
    public static let housekeepingIntervalMillis = 30_000

    private static let housekeeping = Atomic<Bool>(false)
    private static let trims = Atomic<Int>(0)
    private static let trimsThatReturnedMemory = Atomic<Int>(0)

    /// Trims so far (``giveBackFreedMemory()`` calls, timer and decoder closes together), and
    /// how many of them returned pages (malloc_trim(3) returned 1).
    public static var trimCounts: (all: Int, returnedMemory: Int) {
        (trims.load(ordering: .relaxed), trimsThatReturnedMemory.load(ordering: .relaxed))
    }

    /// Starts a thread that calls ``giveBackFreedMemory()`` every `intervalMillis` ms, off every
    /// feed's hot path, for the life of the process. Only the first call starts it; later calls
    /// do nothing.
    public static func startHousekeeping(intervalMillis: Int = housekeepingIntervalMillis) {
        guard !housekeeping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let seconds = Double(max(1, intervalMillis)) / 1000
        let t = Thread {
            _ = spy_name_this_thread("memory trim")
            while true {
                Thread.sleep(forTimeInterval: seconds)
                giveBackFreedMemory()
            }
        }
        t.stackSize = 256 << 10
        t.start()
    }
}
