/// How many access units repairs may decode again: a token bucket that refills at
/// ``refillPerSecond`` up to ``capacity``, so that a sender (or a flood) that seems to continue
/// cut units all the time cannot keep the decoder re-decoding.
struct RepairBudget {
    /// The most access units one repair (or a run of them) may decode again at once.
    static let capacity = 600
    /// Access units given back each second.
    static let refillPerSecond = 60.0
    private var tokens = Double(RepairBudget.capacity)
    private var lastMicros: UInt64

    /// - Parameter nowMicros: the feed's clock now, monotonic µs.
    init(nowMicros: UInt64) { lastMicros = nowMicros }

    /// Takes `count` access units from the budget, refilled first.
    /// - Parameter nowMicros: the feed's clock now, monotonic µs.
    /// - Returns: false (and takes nothing) when it has not that many.
    mutating func take(_ count: Int, nowMicros: UInt64) -> Bool {
        tokens = min(Double(Self.capacity), tokens + Double(nowMicros &- lastMicros) / 1e6 * Self.refillPerSecond)
        lastMicros = nowMicros
        guard Double(count) <= tokens else { return false }
        tokens -= Double(count)
        return true
    }
}
