/// A small jitter buffer that puts RTP packets back in sequence order, holding each at most
/// `windowMicros`. With a window of 0 it holds nothing: packets pass in arrival order.
public struct ReorderBuffer {
    public let windowMicros: UInt64
    private var held: [UInt16: (RTPPacket, UInt64)] = [:]
    private var next: UInt16?
    /// Packets that arrived after later ones and were put back in order.
    public private(set) var putBackInOrder = 0
    /// Packets held at most (a burst larger than this releases the oldest).
    public let capacity: Int

    /// - Parameters:
    ///   - windowMicros: longest wait for a missing packet, µs (0 = no reordering, no wait).
    ///   - capacity: most packets held (default 512).
    public init(windowMicros: UInt64, capacity: Int = 512) {
        self.windowMicros = windowMicros
        self.capacity = capacity
    }

    /// Takes a packet; returns the packets now ready, in order, with their arrival times.
    public mutating func push(_ p: RTPPacket, arrivalMicros: UInt64) -> [(RTPPacket, UInt64)] {
        guard windowMicros > 0 else { return [(p, arrivalMicros)] }
        guard let expected = next else {
            // The first packets of a stream may themselves be out of order: hold them one window,
            // then start from the lowest sequence number seen.
            held[p.sequenceNumber] = (p, arrivalMicros)
            return release(now: arrivalMicros)
        }
        let delta = Int(Int16(bitPattern: p.sequenceNumber &- expected))
        if delta < 0 || delta > 3000 {
            // Late, duplicate or a new stream: let the sequence tracker judge it.
            if delta > 3000 || delta < -3000 { held.removeAll(); next = p.sequenceNumber &+ 1 }
            return [(p, arrivalMicros)]
        }
        // A packet arriving after a later one (held): it came out of order, and is put back.
        let seq = p.sequenceNumber
        if held.keys.contains(where: { Int16(bitPattern: $0 &- seq) > 0 }) { putBackInOrder += 1 }
        held[p.sequenceNumber] = (p, arrivalMicros)
        return release(now: arrivalMicros)
    }

    /// Releases what has waited long enough (call on idle ticks too).
    public mutating func release(now: UInt64) -> [(RTPPacket, UInt64)] {
        var out: [(RTPPacket, UInt64)] = []
        if next == nil {
            guard let oldest = held.values.min(by: { $0.1 < $1.1 }) else { return out }
            guard now >= oldest.1 + windowMicros || held.count >= capacity else { return out }
            let ref = oldest.0.sequenceNumber
            next = held.keys.min { Int16(bitPattern: $0 &- ref) < Int16(bitPattern: $1 &- ref) }
        }
        while let expected = next {
            if let p = held.removeValue(forKey: expected) {
                out.append(p)
                next = expected &+ 1
                continue
            }
            // Missing: give up on it once the oldest held packet has waited the window.
            guard let oldest = held.values.min(by: { $0.1 < $1.1 }) else { break }
            if now >= oldest.1 + windowMicros || held.count >= capacity {
                // Skip to the lowest held sequence number.
                let lowest = held.keys.min { Int16(bitPattern: $0 &- expected) < Int16(bitPattern: $1 &- expected) }!
                next = lowest
                continue
            }
            break
        }
        return out
    }

    /// Forgets everything (sender restart).
    public mutating func reset() { held.removeAll(); next = nil }

    /// Everything held, in sequence order (from the packet awaited, or from the oldest one held
    /// when no order is set yet), with arrival times; then the buffer is empty, as after
    /// ``reset()``. For an SSRC change: the old sender's packets go on, not into the void.
    public mutating func drain() -> [(RTPPacket, UInt64)] {
        guard let ref = next ?? held.values.min(by: { $0.1 < $1.1 })?.0.sequenceNumber else { return [] }
        let order = held.keys.sorted { Int16(bitPattern: $0 &- ref) < Int16(bitPattern: $1 &- ref) }
        let out = order.map { held[$0]! }
        reset()
        return out
    }
}
