import CSystem

/// How the process's memory goes back to the system once Spyglass frees it (issue 17).
///
/// glibc's malloc raises its mmap threshold to the size of each large block freed (up to 32 MiB),
/// so after the first 4K picture buffer goes, the next ones are carved from the feed thread's
/// arena, and freeing them returns nothing: a 4K HEVC stream's decoder, closed after the stream
/// ended, left RSS at 163 MB instead of 43 MB. A fixed threshold (`M_MMAP_THRESHOLD`, mallopt(3):
/// setting it turns the dynamic adjustment off) gives every block of ``mmapThresholdBytes`` or more
/// its own mapping, unmapped on free; measured: 163 → 73 MB. A trim after a big free
/// (``giveBackFreedMemory()``) returns the smaller blocks freed with it: 73 → see the README.
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
        _ = spy_malloc_trim()
    }
}
