/// Who may take over an RTP port whose sender is established: RFC 3550 §A.1's probation for a
/// new SSRC.
///
/// The established sender keeps the feed while it still sends. A new SSRC takes over once it has
/// sent ``minSequential`` packets in sequence with none of the established sender's between them;
/// the packets held meanwhile then go on, so a restarted sender (a new SSRC, RFC 3550 §8.2) loses
/// nothing. A stray packet, or a second sender interleaved with the first on one port, is dropped
/// and counted in ``strayPackets``: it never restarts the feed (a restart waits for the next
/// keyframe, a frozen picture for up to a GOP).
///
/// Memory is bounded: at most ``minSequential`` - 1 packets are held.
struct SSRCProbation<Packet> {
    /// Packets in sequence a new SSRC needs to take over (RFC 3550 §A.1 `MIN_SEQUENTIAL`).
    static var minSequential: Int { 2 }

    private var established: UInt32?
    private var candidate: (ssrc: UInt32, nextSequence: UInt16, held: [Packet])?
    /// Packets of another SSRC dropped while the established sender kept sending.
    private(set) var strayPackets = 0

    /// A probation with no sender yet: the first packet's SSRC is established at once.
    init() {}

    /// Admits one packet of SSRC `ssrc` with RTP sequence number `sequence`.
    /// - Returns: the packets to pass on now, in arrival order: this one, or none while its SSRC
    ///   is on probation, or every held packet of a new SSRC as it takes over.
    mutating func admit(_ packet: Packet, ssrc: UInt32, sequence: UInt16) -> [Packet] {
        guard let current = established, current != ssrc else {
            established = ssrc
            dropCandidate()
            return [packet]
        }
        if var c = candidate, c.ssrc == ssrc, c.nextSequence == sequence {
            c.held.append(packet)
            if c.held.count >= Self.minSequential {
                established = ssrc
                candidate = nil
                return c.held
            }
            c.nextSequence = sequence &+ 1
            candidate = c
            return []
        }
        dropCandidate()
        candidate = (ssrc, sequence &+ 1, [packet])
        return []
    }

    /// The input ended: packets still on probation never took over, and count as stray.
    mutating func finish() { dropCandidate() }

    /// Packets held for a new SSRC right now (counted as stray if it does not take over).
    var onProbation: Int { candidate?.held.count ?? 0 }

    private mutating func dropCandidate() {
        strayPackets += candidate?.held.count ?? 0
        candidate = nil
    }
}
