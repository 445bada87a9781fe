/// Who may take over an RTP port whose sender is established: probation for a new SSRC, after
/// RFC 3550 §A.1 (a source is valid only after `MIN_SEQUENTIAL` packets) and §8.2 (a sender
/// that restarts takes a new SSRC).
///
/// The established sender keeps the feed while it still sends. A new SSRC takes over once it
/// has sent ``minPackets`` packets and the established sender has been silent for
/// ``silenceMicros`` (100 ms); the new SSRC's packets of the last ``holdMicros`` are held
/// meanwhile and then go on in arrival order (the jitter buffer and the sequence tracker see
/// them as usual), so a restarted sender loses nothing, whatever order its packets arrive in.
///
/// A stray packet, or a second sender on the same port while the first still sends (each
/// picture a burst of packets), is dropped and counted in ``strayPackets``: it never restarts
/// the feed (a restart waits for the next keyframe, a frozen picture for up to a GOP).
///
/// Memory is bounded: at most ``holdMicros`` of one SSRC's packets, and never more than
/// ``maxHeld`` packets.
public struct SSRCProbation<Packet> {
    /// Packets a new SSRC needs before it can take over (RFC 3550 §A.1 `MIN_SEQUENTIAL`).
    public static var minPackets: Int { 2 }
    /// How long the established sender must have been silent before another takes over, µs.
    public static var silenceMicros: UInt64 { 100_000 }
    /// How far back a new SSRC's packets are held, µs (all it sent since the old one went
    /// silent, when it takes over at the first packet after ``silenceMicros``).
    public static var holdMicros: UInt64 { 2 * silenceMicros }
    /// Cap on the packets held (100 Mb/s for 200 ms is about 1,800 full-size packets).
    public static var maxHeld: Int { 4096 }

    private var established: UInt32?
    private var lastEstablishedMicros: UInt64 = 0
    private var candidate: UInt32?
    private var held: [(packet: Packet, arrivalMicros: UInt64)] = []
    /// Packets of another SSRC dropped while the established sender kept sending.
    public private(set) var strayPackets = 0

    /// A probation with no sender yet: the first packet's SSRC is established at once.
    public init() {}

    /// Admits one packet of SSRC `ssrc` that arrived at `arrivalMicros` (monotonic µs).
    /// - Returns: the packets to pass on now, in arrival order: this one, or none while its SSRC
    ///   is on probation, or every held packet of a new SSRC as it takes over.
    public mutating func admit(_ packet: Packet, ssrc: UInt32, arrivalMicros now: UInt64) -> [Packet] {
        guard let current = established, current != ssrc else {
            established = ssrc
            lastEstablishedMicros = now
            return [packet]
        }
        if candidate != ssrc {
            dropHeld()
            candidate = ssrc
        }
        held.append((packet, now))
        return tick(nowMicros: now)
    }

    /// Time passed (with or without packets): a new SSRC takes over once the established sender
    /// has been silent long enough, also when the new one has stopped sending meanwhile.
    /// - Returns: its held packets, in arrival order, when it takes over; else none.
    public mutating func tick(nowMicros now: UInt64) -> [Packet] {
        forgetOlderThan(now > Self.holdMicros ? now - Self.holdMicros : 0)
        guard let ssrc = candidate, held.count >= Self.minPackets,
              now >= lastEstablishedMicros + Self.silenceMicros else { return [] }
        established = ssrc
        lastEstablishedMicros = held.last?.arrivalMicros ?? now
        candidate = nil
        defer { held.removeAll() }
        return held.map(\.packet)
    }

    /// The sender learned so far was not the stream (its payload type turned out to be a
    /// stray's): the next packet's SSRC is established at once.
    public mutating func forgetEstablished() {
        dropHeld()
        established = nil
    }

    /// The input ended: packets still on probation never took over, and count as stray.
    public mutating func finish() { dropHeld() }

    /// Packets held for a new SSRC right now (counted as stray if it does not take over).
    public var onProbation: Int { held.count }

    /// True while a new SSRC's packets are held (the feed should tick within ``silenceMicros``).
    public var isHolding: Bool { !held.isEmpty }

    private mutating func forgetOlderThan(_ oldest: UInt64) {
        var n = held.prefix { $0.arrivalMicros < oldest }.count
        n = max(n, held.count - Self.maxHeld)
        guard n > 0 else { return }
        held.removeFirst(n)
        strayPackets += n
    }

    private mutating func dropHeld() {
        strayPackets += held.count
        held.removeAll()
        candidate = nil
    }
}
