/// The glass-to-glass figure a live tile shows beside its badge: the worst of the last second,
/// coloured against the feed's target (`--target-ms` in the wall file).
public struct LatencyChip: Equatable, Sendable {
    /// The worst glass-to-glass time of the pictures shown in the last second, ms.
    public var millis: Double
    /// The feed's target, ms (nil: none given).
    public var targetMillis: Double?
    /// The capture times came after encoding (an RTCP sender report, ``CaptureSource/isLowerBound``):
    /// the figure is at least this.
    public var lowerBound: Bool

    /// - Parameters: millis: worst glass-to-glass of the last second, ms; targetMillis: the target;
    ///   lowerBound: the capture times were stamped after encoding.
    public init(millis: Double, targetMillis: Double?, lowerBound: Bool = false) {
        self.millis = millis
        self.targetMillis = targetMillis
        self.lowerBound = lowerBound
    }

    /// "84 ms" or, with a target, "84 / 120 ms"; "≥84 ms" for a lower bound.
    public var text: String {
        (lowerBound ? "≥" : "")
            + (targetMillis.map { String(format: "%.0f / %.0f ms", millis, $0) } ?? String(format: "%.0f ms", millis))
    }

    /// Green within the target, amber up to half as much again, red beyond; grey without a target.
    public var colour: (r: UInt8, g: UInt8, b: UInt8) {
        guard let target = targetMillis else { return (150, 150, 150) }
        if millis <= target { return (40, 200, 80) }
        return millis <= 1.5 * target ? (240, 170, 20) : (230, 40, 40)
    }
}

/// Glass-to-glass times of the pictures a tile showed in the last second (newest last).
package struct RecentGlassToGlass {
    private var samples: [(presentedMicros: UInt64, millis: Double)] = []
    /// The window the chip looks back over, µs.
    static let windowMicros: UInt64 = 1_000_000

    /// Adds a shown picture's glass-to-glass time and forgets those older than the window.
    mutating func add(presentedMicros: UInt64, millis: Double) {
        samples.append((presentedMicros, millis))
        prune(nowMicros: presentedMicros)
    }

    /// The worst of the last second before `nowMicros`; nil when none.
    mutating func worst(nowMicros: UInt64) -> Double? {
        prune(nowMicros: nowMicros)
        return samples.map(\.millis).max()
    }

    private mutating func prune(nowMicros: UInt64) {
        let oldest = nowMicros > Self.windowMicros ? nowMicros - Self.windowMicros : 0
        samples.removeAll { $0.presentedMicros < oldest }
    }
}
