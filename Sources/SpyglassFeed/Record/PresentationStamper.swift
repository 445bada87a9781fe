import SpyglassPipeline

/// Gives the access units of a recording, which come in decode order, their presentation (pts)
/// and decode (dts) time stamps, µs from the file's start, as a decoder's picture buffer would
/// output them (the bumping process, ITU-T H.264 §C.4.5.3, H.265 §C.5.2.2):
/// - each picture waits in the buffer until more than `reorderDepth` are held, and then the one
///   first in output order (``PictureOrder``) leaves it;
/// - a picture whose source time is its capture time (RTP with RTCP, ST 0604 SEI, KLV) is
///   presented at that time; one known only by its arrival is presented at the arrival of the
///   access unit that let it leave the buffer: when a decoder could first show it;
/// - an access unit's dts is the earliest pts of itself and the `reorderDepth` after it in decode
///   order, so that dts rises, dts ≤ pts, and a stream without B-frames (depth 0) keeps
///   pts = dts = its own time.
/// Access units come out in decode order once their window is known (up to 2 × depth + 1 held).
/// A stream that reorders deeper than it declared still gets rising dts (``ContainerWriter``
/// keeps dts rising and pts ≥ dts), not an error.
struct PresentationStamper<Payload> {
    /// One access unit with its time stamps, µs from the file's start.
    struct Stamped {
        let payload: Payload
        let pts: Int64
        let dts: Int64
    }

    /// Pictures held before one is output (``PictureOrderCounter/reorderDepth(of:store:)``).
    private(set) var reorderDepth: Int
    private var queue: [(payload: Payload, source: Int64, atCapture: Bool, pts: Int64?)] = []
    private var firstQueued = 0
    private var waiting: [(order: PictureOrder, index: Int)] = []
    private var lastSource: Int64 = 0
    private var lastInterval: Int64 = 33_333
    /// Pictures in output order with their pts, not yet taken by ``takePresented()``.
    private var presented: [(payload: Payload, pts: Int64)] = []

    init(reorderDepth: Int) {
        self.reorderDepth = max(0, reorderDepth)
    }

    /// A deeper reorder declared mid-file (a new SPS) is taken; a shallower one is not, so
    /// that pictures already held keep their place.
    mutating func declare(reorderDepth depth: Int) {
        reorderDepth = max(reorderDepth, min(depth, 16))
    }

    /// The next access unit in decode order.
    /// - Parameters:
    ///   - order: its picture's place in output order.
    ///   - sourceMicros: its capture time (`atCapture`) or arrival, µs from the file's start.
    /// - Returns: the access units now stamped, in decode order.
    mutating func push(_ payload: Payload, order: PictureOrder, sourceMicros: Int64, atCapture: Bool) -> [Stamped] {
        if !queue.isEmpty && sourceMicros > lastSource { lastInterval = sourceMicros - lastSource }
        lastSource = max(lastSource, sourceMicros)
        queue.append((payload, sourceMicros, atCapture, nil))
        waiting.append((order, firstQueued + queue.count - 1))
        while waiting.count > reorderDepth { bump(at: lastSource) }
        return drain(final: false)
    }

    /// Every access unit still held, stamped: pictures that waited for a later arrival are
    /// presented one interval apart after the last one.
    mutating func flush() -> [Stamped] {
        var t = lastSource
        while !waiting.isEmpty {
            t += lastInterval
            bump(at: t)
        }
        return drain(final: true)
    }

    /// Pictures in output order, each with its pts, since the last call.
    mutating func takePresented() -> [(payload: Payload, pts: Int64)] {
        defer { presented.removeAll(keepingCapacity: true) }
        return presented
    }

    /// The picture first in output order leaves the buffer at `t`.
    private mutating func bump(at t: Int64) {
        guard let k = waiting.indices.min(by: { waiting[$0].order < waiting[$1].order }) else { return }
        let i = waiting.remove(at: k).index - firstQueued
        let pts = queue[i].atCapture ? queue[i].source : t
        queue[i].pts = pts
        presented.append((queue[i].payload, pts))
    }

    /// The access units at the head whose window (themselves and `reorderDepth` after) has pts.
    private mutating func drain(final: Bool) -> [Stamped] {
        var out: [Stamped] = []
        var head = 0
        while head < queue.count {
            let end = head + reorderDepth
            guard final || end < queue.count else { break }
            let stamps = queue[head...min(end, queue.count - 1)].compactMap(\.pts)
            guard stamps.count == min(end, queue.count - 1) - head + 1, let dts = stamps.min() else { break }
            out.append(Stamped(payload: queue[head].payload, pts: stamps[0], dts: dts))
            head += 1
        }
        queue.removeFirst(head)
        firstQueued += head
        return out
    }
}
