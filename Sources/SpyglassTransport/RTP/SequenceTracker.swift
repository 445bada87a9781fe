/// The codec-independent part of RTP reception (RFC 3550 §A.1): sequence numbers, loss,
/// duplicates, reordering, and sender restarts. Codec payload rules live in the depacketizers.
///
/// With a reorder window of 0 (the default: no wait), packets are passed on in arrival order;
/// one that arrives after a later packet was already passed on is counted as reordered and
/// dropped (its access unit was already damaged by the gap). With a window, packets are held
/// up to that long to put them back in order.
public struct SequenceTracker {
    /// What was counted.
    public struct Counters: Equatable, Sendable, Codable {
        /// Packets missing from the sequence (gaps), RTP's "lost".
        public var lost = 0
        /// Packets that arrived out of order (passed on in order within the window, or dropped as late).
        public var reordered = 0
        /// Packets seen twice, dropped.
        public var duplicates = 0
        /// Sender restarts: a new SSRC, or a sequence jump too large for loss.
        public var resets = 0
        /// Packets whose SSRC is not the one before (RFC 3550 §8.2): a new sender, or two senders
        /// (or one misbehaving) alternating on one port, each change counted. Each is also a
        /// restart; none is counted as lost, reordered or duplicated (each SSRC has its own
        /// sequence numbers, RFC 3550 §5.1, so comparing across them means nothing).
        public var ssrcChanges = 0
    }

    /// What the tracker decided about a packet.
    public enum Verdict: Equatable {
        /// In order: pass on. `gap` packets were skipped just before it (0 = none).
        case accept(gap: Int)
        /// A duplicate or a packet too late to use: drop.
        case drop
        /// A new stream (SSRC change or sequence reset): reset state, then pass on.
        case restart
    }

    /// Loss, reordering, duplicates and restarts counted so far, in packets (sequence checks
    /// after RFC 3550 §A.1).
    public private(set) var counters = Counters()
    private var ssrc: UInt32?
    private var expected: UInt16 = 0
    private var recent: [UInt16] = []       // last sequence numbers accepted (for duplicates)
    /// A jump larger than this (forward or back) is a restart, not loss (RFC 3550 MAX_DROPOUT-like).
    public let restartJump: Int

    /// A tracker that has seen no packet yet.
    /// - Parameter restartJump: sequence distance, in packets, that means a new stream (default
    ///   3000, RFC 3550 §A.1 MAX_DROPOUT).
    public init(restartJump: Int = 3000) { self.restartJump = restartJump }

    /// Classifies a packet's sequence number.
    public mutating func observe(ssrc newSSRC: UInt32, sequenceNumber seq: UInt16) -> Verdict {
        guard let current = ssrc else {
            ssrc = newSSRC
            accept(seq)
            return .accept(gap: 0)
        }
        if newSSRC != current {
            counters.resets += 1
            counters.ssrcChanges += 1
            ssrc = newSSRC
            recent.removeAll()
            accept(seq)
            return .restart
        }
        let delta = Int(Int16(bitPattern: seq &- expected))   // -32768...32767, wrap-aware
        if delta == 0 {
            accept(seq)
            return .accept(gap: 0)
        }
        if delta > 0 && delta <= restartJump {
            counters.lost += delta
            accept(seq)
            return .accept(gap: delta)
        }
        if delta < 0 && -delta <= restartJump {
            if recent.contains(seq) { counters.duplicates += 1 } else {
                counters.reordered += 1
                // It was counted lost when skipped; it arrived after all.
                if counters.lost > 0 { counters.lost -= 1 }
                remember(seq)                      // a second copy of it is a duplicate
            }
            return .drop
        }
        counters.resets += 1
        recent.removeAll()
        accept(seq)
        return .restart
    }

    private mutating func accept(_ seq: UInt16) {
        expected = seq &+ 1
        remember(seq)
    }

    /// Keeps the last 64 sequence numbers seen, for duplicates.
    private mutating func remember(_ seq: UInt16) {
        recent.append(seq)
        if recent.count > 64 { recent.removeFirst(recent.count - 64) }
    }
}
