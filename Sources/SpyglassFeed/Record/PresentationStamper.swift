import SpyglassPipeline

/// Gives the access units of a recording, which come in decode order, their presentation (pts)
/// and decode (dts) time stamps, µs from the file's start, as a decoder's picture buffer would
/// output them (the bumping process, ITU-T H.264 §C.4.5.3, H.265 §C.5.2.2):
/// - each picture waits in the buffer until more than `reorderDepth` are held, and then the one
///   first in output order (``PictureOrder``) leaves it;
/// - a picture whose source time is its capture time (RTP with RTCP, ST 0604 SEI, KLV) is
///   presented at that time (shifted to go on from the pictures before it when the stream
///   began without capture times); one known only by its arrival is presented at the arrival
///   of the access unit that let it leave the buffer: when a decoder could first show it;
/// - the k-th access unit in decode order is decoded at the pts of the picture output
///   `reorderDepth` places before its rank (k − depth; the first output's for the first ones):
///   dts rises with the output pictures' steps, dts ≤ pts (a picture leaves the buffer at most
///   depth places before its decode rank), and a stream without B-frames (depth 0) keeps
///   pts = dts = its own time. Taking the earliest pts of a window of access units instead gave
///   two access units the same dts in every group of B-frames, which libavformat's readers
///   warn of ("non monotonically increasing dts") on every one.
/// Access units come out in decode order once their pts is known (up to depth + 1 held).
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
    /// The pts of the output pictures from rank `outputBase` on (those a dts may still take).
    private var outputPts: [Int64] = []
    private var outputBase = 0
    private var lastOutputPts: Int64?
    /// Added to capture times: 0 when the first picture out had one (see ``bump(at:)``).
    private var captureShift: Int64?

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
        return drain()
    }

    /// Every access unit still held, stamped: pictures that waited for a later arrival are
    /// presented one interval apart after the last one.
    mutating func flush() -> [Stamped] {
        var t = lastSource
        while !waiting.isEmpty {
            t += lastInterval
            bump(at: t)
        }
        return drain()
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
        var candidate = t
        if queue[i].atCapture {
            // Capture times that start after the file's first pictures (RTP before its first
            // RTCP sender report) go on from them, a picture after the last: on their own they
            // would jump back by the capture-to-arrival time (100 ms behind an x264 with
            // B-frames), onto pictures already presented. They keep their spacing.
            let shift = captureShift ?? lastOutputPts.map { max(0, $0 + lastInterval - queue[i].source) } ?? 0
            captureShift = shift
            candidate = queue[i].source + shift
        }
        // Output order is presentation order: a time less than 1 ms after the last picture's (a
        // sender's clock stepping back; two pictures let out by one arrival) is put 1 ms after it,
        // Matroska's tick (1 µs apart, they shared one and a reader saw them out of turn).
        let pts = max(candidate, lastOutputPts.map { $0 + 1_000 } ?? .min)
        lastOutputPts = pts
        queue[i].pts = pts
        presented.append((queue[i].payload, pts))
        outputPts.append(pts)
    }

    /// The access units at the head whose pts is known, with their dts (see the type's rule).
    private mutating func drain() -> [Stamped] {
        var out: [Stamped] = []
        var head = 0
        while head < queue.count, let pts = queue[head].pts {
            let rank = max(0, firstQueued + head - reorderDepth) - outputBase
            guard rank < outputPts.count else { break }
            // The first `depth` take the first picture's pts too (the writer puts each a tick on).
            out.append(Stamped(payload: queue[head].payload, pts: pts, dts: min(outputPts[max(0, rank)], pts)))
            head += 1
        }
        queue.removeFirst(head)
        firstQueued += head
        // Output ranks no later access unit's dts can take (the depth only grows).
        let keepFrom = max(0, firstQueued - reorderDepth)
        if keepFrom > outputBase {
            outputPts.removeFirst(min(keepFrom - outputBase, outputPts.count))
            outputBase = keepFrom
        }
        return out
    }
}
