/// How long a live byte stream (raw Annex B over UDP, TCP or a pipe) must be quiet before the
/// pending NAL unit is taken as complete, so that a picture is not held until the next one starts.
///
/// A byte stream cannot tell a finished NAL unit from a stalled one; two things make the guess good:
/// - **Datagram sizes.** Senders cut a frame into datagrams of the link's size; only the last one
///   of a burst is shorter. After a short datagram the base time applies (1 ms); after a
///   full-size one the sender is most likely in the middle of a frame, so it must stay quiet
///   four times longer (at least 4 ms) before the unit is cut.
/// - **Learning.** When a flush turns out to have cut a unit (more of it arrives before any start
///   code), the time doubles, up to 50 ms; after 60 clean flushes in a row it halves again,
///   back towards the base.
/// - **Burst end.** Once ``burstEndTrustCount`` flushes in a row after a short datagram were
///   clean (the next datagram began with a start code and no picture was split), the sender has
///   shown that it packs each access unit into full datagrams and a short last one. From then on
///   a short datagram ends the access unit at once, with no wait (``isBurstEnd``). A cut or a
///   split picture withdraws that trust until it is earned again.
public struct IdleFlushPolicy: Sendable {
    /// Clean flushes after short datagrams needed before a short datagram ends an access unit at once.
    public static let burstEndTrustCount = 30
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

    /// - Parameter baseMicros: quiet time after a short datagram or a read, µs.
    public init(baseMicros: Int) {
        self.baseMicros = max(0, baseMicros)
        currentMicros = self.baseMicros
    }

    /// Notes one datagram's size (datagram sources only).
    public mutating func noteDatagram(size: Int) {
        previousShort = lastDatagramShort
        lastDatagram = size
        // The full size is the largest of the recent datagrams (forgotten slowly).
        recentMax = max(recentMax, size)
        datagramsSinceMax += 1
        if datagramsSinceMax >= 256 { fullDatagram = recentMax; recentMax = 0; datagramsSinceMax = 0 }
        fullDatagram = max(fullDatagram, size)
    }

    /// The stream has full-size datagrams (at least 256 bytes) and the last one was shorter.
    /// (A packing sender fills every datagram but the last to exactly the same size.)
    private var lastDatagramShort: Bool {
        fullDatagram >= 256 && lastDatagram < fullDatagram
    }

    /// True when the datagram just noted ends the sender's access unit: it is short, and short
    /// datagrams of this stream have ended access units cleanly ``burstEndTrustCount`` times in a row.
    public var isBurstEnd: Bool {
        baseMicros > 0 && cleanAfterShort >= trustNeeded && lastDatagramShort
    }

    /// Quiet time needed now before flushing, µs (0 = do not flush on idle).
    public func thresholdMicros(datagrams: Bool) -> Int {
        guard baseMicros > 0 else { return 0 }
        if datagrams && fullDatagram >= 256 && lastDatagram * 10 >= fullDatagram * 9 {
            return max(4 * currentMicros, 4_000)
        }
        return currentMicros
    }

    /// A flush cut a unit: wait longer from now on, and stop trusting burst ends.
    /// Returns the new time, µs.
    public mutating func noteCut() -> Int {
        cleanFlushes = 0
        if cleanAfterShort >= trustNeeded { trustNeeded = min(trustNeeded * 2, 1 << 20) }
        cleanAfterShort = 0
        currentMicros = min(50_000, max(currentMicros * 2, baseMicros + 1_000))
        return currentMicros
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
        cleanFlushes += 1
        guard cleanFlushes >= 60, currentMicros > baseMicros else { return nil }
        cleanFlushes = 0
        currentMicros = max(baseMicros, currentMicros / 2)
        return currentMicros
    }
}
