/// A streaming MAVLink 1 and 2 parser: bytes in, checked frames out, however the input is cut
/// (pushing one byte at a time gives the frames that pushing everything at once gives).
///
/// A candidate frame starts at a magic byte (0xFD, 0xFE). It is dropped, counted, and the bytes
/// after its magic are scanned again, when its incompat flags are unknown, its message id is not
/// in the dialect (no CRC_EXTRA to check it with), a MAVLink 1 length exceeds the message's, or
/// its CRC fails. Only a viable candidate is held: at most ``MAVLinkFrame/maxLength`` bytes.
/// (MAVLink serialization, https://mavlink.io/en/guide/serialization.html)
public struct MAVLinkParser: Sendable {
    /// What the parser saw. Every byte pushed ends up in a good frame, in ``bytesSkipped``, or
    /// still held (``bufferedByteCount``); each rejected candidate counts once, by its reason.
    public struct Counters: Equatable, Sendable {
        /// Frames that passed their CRC and were returned.
        public var framesGood = 0
        /// Of those, MAVLink 1 frames.
        public var framesV1 = 0
        /// Of those, signed MAVLink 2 frames (signature skipped).
        public var framesSigned = 0
        /// Of those, MAVLink 2 frames longer than the dialect's message (extensions it does not know).
        public var framesLongerThanKnown = 0
        /// Candidates whose CRC (with the message's CRC_EXTRA) did not match.
        public var crcErrors = 0
        /// Candidates whose message id the dialect does not define.
        public var unknownMessages = 0
        /// MAVLink 2 candidates with incompat flags other than 0x01 (signed).
        public var badIncompatFlags = 0
        /// MAVLink 1 candidates longer than their message's full length.
        public var badLengths = 0
        /// Candidates the stream ended inside (``finish()``).
        public var truncatedFrames = 0
        /// Bytes not in any good frame: garbage between frames and the bytes of rejected candidates.
        public var bytesSkipped = 0

        public init() {}
    }

    /// The messages whose frames can be checked (default: common.xml).
    public let dialect: MAVLinkDialect
    public private(set) var counters = Counters()
    /// The held bytes of an incomplete candidate: a magic byte first, at most 280 bytes.
    private var pending: [UInt8] = []
    /// How many held bytes the candidate needs before it is looked at again.
    private var needed = 1

    public init(dialect: MAVLinkDialect = .common) { self.dialect = dialect }

    /// Bytes held for a frame not yet complete (0...279).
    public var bufferedByteCount: Int { pending.count }

    /// Takes the next bytes of the stream.
    /// - Returns: the frames completed by them, in stream order.
    public mutating func push(_ bytes: some Collection<UInt8>) -> [MAVLinkFrame] {
        var frames: [MAVLinkFrame] = []
        let done: Void? = bytes.withContiguousStorageIfAvailable { push($0, into: &frames) }
        if done == nil { Array(bytes).withUnsafeBufferPointer { push($0, into: &frames) } }
        return frames
    }

    /// Skips to a magic byte while nothing is held, then hands the candidate as many bytes as
    /// it needs before it can be judged again.
    private mutating func push(_ b: UnsafeBufferPointer<UInt8>, into frames: inout [MAVLinkFrame]) {
        var i = 0
        while i < b.count {
            if pending.isEmpty {
                let start = i
                while i < b.count, b[i] != MAVLinkFrame.magicV2, b[i] != MAVLinkFrame.magicV1 { i += 1 }
                counters.bytesSkipped += i - start
                guard i < b.count else { return }
            }
            let n = min(b.count - i, max(1, needed - pending.count))
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<(i + n)]))
            i += n
            if pending.count >= needed { drain(into: &frames, atEnd: false) }
        }
    }

    /// The frame `bytes` are, judged as the parser judges a candidate, when they are exactly one
    /// good frame (magic first, nothing after it); else nil. Nothing is rescanned.
    public static func frame(exactly bytes: some Collection<UInt8>, dialect: MAVLinkDialect = .common) -> MAVLinkFrame? {
        let b = Array(bytes)
        guard let first = b.first, first == MAVLinkFrame.magicV2 || first == MAVLinkFrame.magicV1,
              case .frame(let frame, _) = Candidate.examine(b, dialect), frame.raw.count == b.count else { return nil }
        return frame
    }

    /// The stream ended: the held candidate is counted as truncated and the bytes after its
    /// magic are scanned again (a whole frame may lie inside them).
    /// - Returns: the frames found there.
    public mutating func finish() -> [MAVLinkFrame] {
        var frames: [MAVLinkFrame] = []
        drain(into: &frames, atEnd: true)
        return frames
    }

    /// Looks at the held candidate until it needs more bytes: emits it, or drops its magic and
    /// rescans; at the end of the stream an incomplete candidate is dropped too.
    private mutating func drain(into frames: inout [MAVLinkFrame], atEnd: Bool) {
        while !pending.isEmpty {
            switch Candidate.examine(pending, dialect) {
            case .needs(let n) where !atEnd:
                needed = n
                return
            case .needs:
                reject(.truncated)
            case .bad(let reason):
                reject(reason)
            case .frame(let frame, let longer):
                count(frame, longer: longer)
                frames.append(frame)
                pending.removeFirst(frame.raw.count)
                dropLeadingGarbage()
            }
        }
        needed = 1
    }

    /// Counts a rejected candidate and drops its magic byte; the rest is scanned again.
    private mutating func reject(_ reason: Candidate.Reason) {
        counters.count(reason)
        counters.bytesSkipped += 1
        pending.removeFirst()
        dropLeadingGarbage()
    }

    /// Drops held bytes before the next magic byte (counted as skipped).
    private mutating func dropLeadingGarbage() {
        let start = pending.firstIndex { $0 == MAVLinkFrame.magicV2 || $0 == MAVLinkFrame.magicV1 } ?? pending.endIndex
        counters.bytesSkipped += start
        pending.removeFirst(start)
    }

    private mutating func count(_ frame: MAVLinkFrame, longer: Bool) {
        counters.framesGood += 1
        if frame.version == 1 { counters.framesV1 += 1 }
        if frame.signed { counters.framesSigned += 1 }
        if longer { counters.framesLongerThanKnown += 1 }
    }
}
