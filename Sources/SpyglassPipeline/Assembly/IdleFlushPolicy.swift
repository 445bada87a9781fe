/// How long a live byte stream (raw Annex B over UDP, TCP or a pipe) must be quiet before the
/// pending NAL unit is taken as complete, so that a picture is not held until the next one starts.
///
/// A byte stream cannot tell a finished NAL unit from a stalled one; two things make the guess good:
/// - **Datagram sizes.** Senders cut a frame into datagrams of the link's size; only the last one
///   of a burst is shorter. After a short datagram the base time applies (1 ms); after a
///   full-size one the sender is most likely in the middle of a frame, so it must stay quiet
///   four times longer, and at least the mid-frame wait (4 ms to start with), before the unit
///   is cut.
/// - **Learning.** When a flush turns out to have cut a unit (more of it arrives before any start
///   code): after a short datagram, the base time doubles, up to 50 ms, and halves again after
///   60 clean flushes in a row; after a full one, the mid-frame wait becomes twice the pause the
///   sender took (up to 50 ms), and halves only after 9000 clean flushes (5 minutes at 30 fps).
///   A sender or link that pauses mid-frame costs nothing once learned: frames still end at
///   their short last datagram. A byte stream (TCP, a pipe) has no datagram sizes: after a cut
///   its wait becomes twice the pause seen (up to 50 ms; ``byteStreamMicros``), and halves only
///   after 9000 clean flushes in a row, as the mid-frame wait does. There it is paid after every
///   frame: it is the price of not cutting (and re-decoding from the last IDR) again.
/// - **Burst end.** Once ``burstEndTrustCount`` flushes in a row after a short datagram were
///   clean (the next datagram began with a start code and no picture was split), and the
///   stream's near-full datagrams are nine times in ten exactly the full size (a sender that
///   packs fills every datagram of a burst but the last to exactly the same size; one whose
///   sizes wander is not a packer), a short datagram ends the NAL unit at once, with no wait
///   (``isBurstEnd``). It ends the access unit too once the picture has as many slices as the
///   last pictures had (``slicesPerPicture``): a sender that switches to one write per slice
///   then splits nothing. A cut or a split picture withdraws that trust until it is earned
///   again, twice as long.
public struct IdleFlushPolicy: Sendable {
    /// Clean flushes after short datagrams needed before a short datagram ends an access unit at once.
    public static let burstEndTrustCount = 30
    /// The smallest datagram size, bytes, that counts as a link's full size: below it, sizes say
    /// nothing about where a frame ends (a sender writing tiny NAL units one by one). Links cut
    /// to 200 bytes (narrow radio links, `tools/peer-latency --mtu 200`) are above it.
    public static let smallestFullDatagram = 128
    /// The configured time, µs (0 = never flush on idle).
    public let baseMicros: Int
    /// The time now in force after a short datagram (or for byte streams), µs.
    public private(set) var currentMicros: Int
    private var fullDatagram = 0
    private var recentMax = 0
    private var datagramsSinceMax = 0
    private var lastDatagram = 0
    private var cleanFlushes = 0
    private var previousShort = false
    private var cleanAfterShort = 0
    private var trustNeeded = IdleFlushPolicy.burstEndTrustCount
    /// Quiet time needed after a full-size datagram, µs (learned from mid-frame pauses).
    public private(set) var midFrameMicros = 4_000
    /// Quiet time learned on a byte stream from the pauses that cut units, µs (0: none yet;
    /// the base time applies).
    public private(set) var byteStreamMicros = 0
    /// A datagram was noted: the source delivers datagrams, not a byte stream.
    private var sawDatagram = false
    private var cleanSinceMidFrameCut = 0
    private var lastSlices = 0
    private var nearFull = 0
    private var exactFull = 0
    private var sameSlicesRun = 0
    /// Pictures in a row that must have had the same number of slices before that number is trusted.
    public static let slicesRunNeeded = 8

    /// - Parameter baseMicros: quiet time after a short datagram or a read, µs.
    public init(baseMicros: Int) {
        self.baseMicros = max(0, baseMicros)
        currentMicros = self.baseMicros
    }

    /// Notes one datagram's size (datagram sources only).
    public mutating func noteDatagram(size: Int) {
        sawDatagram = true
        previousShort = lastDatagramShort
        lastDatagram = size
        // The full size is the largest of the recent datagrams (forgotten slowly).
        recentMax = max(recentMax, size)
        datagramsSinceMax += 1
        if datagramsSinceMax >= 256 {
            if recentMax != fullDatagram { nearFull = 0; exactFull = 0 }
            fullDatagram = recentMax; recentMax = 0; datagramsSinceMax = 0
        }
        if size > fullDatagram { nearFull = 0; exactFull = 0 }
        fullDatagram = max(fullDatagram, size)
        if fullDatagram >= Self.smallestFullDatagram && size * 10 >= fullDatagram * 9 {
            nearFull += 1
            if size == fullDatagram { exactFull += 1 }
            if nearFull >= 128 { nearFull /= 2; exactFull /= 2 }
        }
    }

    /// Nine in ten of the recent near-full datagrams (at least 16) were exactly the full size.
    private var fullSizeIsExact: Bool { nearFull >= 16 && exactFull * 10 >= nearFull * 9 }

    /// The stream has full-size datagrams (at least ``smallestFullDatagram`` bytes) and the last
    /// one was shorter.
    /// (A packing sender fills every datagram but the last to exactly the same size.)
    private var lastDatagramShort: Bool {
        fullDatagram >= Self.smallestFullDatagram && lastDatagram < fullDatagram
    }

    /// True when the datagram just noted ends the sender's access unit: it is short, and short
    /// datagrams of this stream have ended access units cleanly ``burstEndTrustCount`` times in a row.
    public var isBurstEnd: Bool {
        baseMicros > 0 && cleanAfterShort >= trustNeeded && lastDatagramShort && fullSizeIsExact
    }

    /// Quiet time needed now before flushing, µs (0 = do not flush on idle).
    public func thresholdMicros(datagrams: Bool) -> Int {
        guard baseMicros > 0 else { return 0 }
        if datagrams && fullDatagram >= Self.smallestFullDatagram && lastDatagram * 10 >= fullDatagram * 9 {
            return max(4 * currentMicros, midFrameMicros)
        }
        return datagrams ? currentMicros : max(currentMicros, byteStreamMicros)
    }

    /// The longest a learned wait grows, µs: a pause longer than this inside a unit is a stall,
    /// and its cut is repaired rather than waited for.
    public static let longestWaitMicros = 50_000

    /// A flush cut a unit; more of it came `pauseMicros` after the data before the flush.
    /// Call after ``noteDatagram(size:)`` of the datagram that showed the cut.
    /// - Returns: which wait was raised (after a short or a full datagram; on a byte stream,
    ///   `afterShortDatagram` is false and the value is ``byteStreamMicros``) and its new value, µs.
    public mutating func noteCut(pauseMicros: Int) -> (afterShortDatagram: Bool, micros: Int) {
        cleanFlushes = 0
        if !sawDatagram {
            cleanSinceMidFrameCut = 0
            byteStreamMicros = min(Self.longestWaitMicros, max(byteStreamMicros * 2, 2 * pauseMicros, baseMicros + 1_000))
            return (false, byteStreamMicros)
        }
        if previousShort {
            // A short datagram that did not end the burst: no trust in burst ends for a while.
            if cleanAfterShort >= trustNeeded { trustNeeded = min(trustNeeded * 2, 1 << 20) }
            cleanAfterShort = 0
            currentMicros = min(Self.longestWaitMicros, max(currentMicros * 2, baseMicros + 1_000))
            return (true, currentMicros)
        }
        cleanSinceMidFrameCut = 0
        midFrameMicros = min(Self.longestWaitMicros, max(midFrameMicros * 2, 2 * pauseMicros))
        return (false, midFrameMicros)
    }

    /// Notes the slice count of a completed picture.
    public mutating func noteAccessUnit(slices: Int) {
        if slices == lastSlices { sameSlicesRun += 1 } else { lastSlices = slices; sameSlicesRun = 1 }
    }

    /// The number of slices every recent picture had (``slicesRunNeeded`` in a row), or nil.
    /// A burst end closes the access unit only once it holds that many.
    public var slicesPerPicture: Int? {
        sameSlicesRun >= Self.slicesRunNeeded && lastSlices > 0 ? lastSlices : nil
    }

    /// A flush closed an access unit between two slices of one picture: stop trusting burst ends,
    /// and ask for twice as many clean ones before trusting them again.
    public mutating func noteSplit() {
        cleanAfterShort = 0
        trustNeeded = min(trustNeeded * 2, 1 << 20)
    }

    /// A flush that did not cut anything (the next data began with a start code).
    /// Call after ``noteDatagram(size:)`` of the datagram that proved it clean.
    /// Returns the new time when it went back down, else nil.
    public mutating func noteCleanFlush() -> Int? {
        if previousShort { cleanAfterShort += 1 }
        cleanSinceMidFrameCut += 1
        if cleanSinceMidFrameCut >= 9000 && (midFrameMicros > 4_000 || byteStreamMicros > 0) {
            cleanSinceMidFrameCut = 0
            midFrameMicros = max(4_000, midFrameMicros / 2)
            byteStreamMicros = byteStreamMicros / 2 > baseMicros ? byteStreamMicros / 2 : 0
        }
        cleanFlushes += 1
        guard cleanFlushes >= 60, currentMicros > baseMicros else { return nil }
        cleanFlushes = 0
        currentMicros = max(baseMicros, currentMicros / 2)
        return currentMicros
    }
}
