/// Times for a container's video packets in decode order, made from their presentation time
/// stamps: the k-th packet read gets the k-th smallest pts (as libavformat guesses a dts from a
/// window of pts when a file has none).
///
/// A Matroska file stores only presentation times, and libavformat gives no dts for the first
/// packets of a B-frame stream (pts 0, 100, 33, 67 ms: dts N/A, N/A, 0, 33); timing entries by
/// "dts, else pts" bunched them (0, 100, 100.001, …). With each packet at its rank's presentation
/// time, times rise in decode order and the picture a decoder outputs k-th after a keyframe has
/// the k-th time: what `replay --from` hides by (``RecordingSource/picture(fromAccessUnit:)``).
/// Values in, values out: µs, or any unit the caller keeps to.
struct DecodeOrderTimes<Payload> {
    /// Packets held before the oldest is given its time: more than any stream's reorder depth
    /// (at most 16 pictures in H.264 and H.265, ITU-T H.264 §A.3.1, H.265 §A.4.2).
    static var depth: Int { 17 }

    private var held: [Payload] = []
    private var stamps: [Int64] = []      // ascending
    private var newest: Int64?

    /// Takes the next packet in decode order with its pts (nil: none; it is then a frame,
    /// 1/30 s, after the newest stamp). Returns the packets whose times are now known, each with
    /// its time, in decode order.
    mutating func push(_ payload: Payload, pts: Int64?) -> [(Payload, Int64)] {
        let stamp = pts ?? (newest.map { $0 + 33_333 } ?? 0)
        newest = max(newest ?? stamp, stamp)
        held.append(payload)
        stamps.insert(stamp, at: stamps.firstIndex { $0 > stamp } ?? stamps.endIndex)
        guard held.count > Self.depth else { return [] }
        return [(held.removeFirst(), stamps.removeFirst())]
    }

    /// The packets still held, each with its time, in decode order (at the end of the file).
    mutating func flush() -> [(Payload, Int64)] {
        defer { held = []; stamps = [] }
        return Array(zip(held, stamps))
    }
}
