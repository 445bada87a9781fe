/// Glass-to-glass over the last seconds, one figure a second (the worst, p99, of that second):
/// what the overlay's sparkline draws. A second with no figure (no capture time, no picture)
/// keeps its place as nil, so a gap shows as a gap.
public struct GlassToGlassHistory: Equatable, Sendable {
    /// Seconds kept.
    public let capacity: Int
    /// Oldest first, ms; nil for a second with no figure.
    public private(set) var values: [Double?] = []

    /// - Parameter capacity: seconds kept (10 by default, as the overlay shows).
    public init(capacity: Int = 10) { self.capacity = max(1, capacity) }

    /// Adds one second's figure, ms (nil: none that second), dropping the oldest beyond capacity.
    public mutating func append(_ millis: Double?) {
        values.append(millis)
        if values.count > capacity { values.removeFirst(values.count - capacity) }
    }

    /// The top of the sparkline's scale, ms: the largest figure or 1.5 times the target, whichever
    /// is larger, so the target line always shows.
    public func scaleTop(targetMillis: Double) -> Double {
        max(values.compactMap { $0 }.max() ?? 0, 1.5 * targetMillis)
    }
}
