#if canImport(Glibc)
import Glibc
#endif

/// A latency histogram with fixed buckets: constant memory, constant time per sample, and
/// percentiles without sorting.
///
/// Buckets are 1/16 of an octave wide from 1 µs to about 67 s (26 octaves), so a percentile read
/// back is within about 2 % of the true sample value (the bucket is interpolated linearly).
/// Values are in µs.
public struct Histogram: Sendable, Equatable {
    /// Sub-buckets per doubling.
    public static let perOctave = 16
    /// Octaves covered above 1 µs.
    public static let octaves = 26
    private var buckets = [UInt64](repeating: 0, count: Histogram.perOctave * Histogram.octaves + 1)
    /// Samples taken.
    public private(set) var count: UInt64 = 0
    /// Sum of the samples, µs.
    public private(set) var sumMicros: UInt64 = 0
    /// Largest sample, µs.
    public private(set) var maxMicros: UInt64 = 0

    public init() {}

    /// Bucket index of a value in µs: 0 for ≤ 1 µs, then 16 per octave; the last bucket takes the rest.
    static func bucket(_ micros: UInt64) -> Int {
        guard micros > 1 else { return 0 }
        let i = Int((log2(Double(micros)) * Double(perOctave)).rounded(.up))
        return min(max(i, 0), perOctave * octaves)
    }

    /// Upper bound of bucket `i`, µs.
    static func upperBound(_ i: Int) -> Double { exp2(Double(i) / Double(perOctave)) }

    /// Adds one sample, µs.
    public mutating func record(_ micros: UInt64) {
        buckets[Self.bucket(micros)] += 1
        count += 1
        sumMicros &+= micros
        maxMicros = max(maxMicros, micros)
    }

    /// The value below which a fraction `q` (0...1) of the samples fall, µs; nil with no samples.
    public func quantileMicros(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, (q * Double(count)).rounded(.up))
        var seen: Double = 0
        for (i, n) in buckets.enumerated() where n > 0 {
            if seen + Double(n) >= rank {
                let lo = i == 0 ? 0 : Self.upperBound(i - 1)
                let hi = min(Self.upperBound(i), Double(maxMicros))
                let within = (rank - seen) / Double(n)
                return max(lo, min(hi, lo + (hi - lo) * within))
            }
            seen += Double(n)
        }
        return Double(maxMicros)
    }

    /// The samples taken since `earlier` (an earlier copy of this histogram): what a window of
    /// time added. Its largest sample is the upper bound of its highest bucket.
    public func subtracting(_ earlier: Histogram) -> Histogram {
        var d = Histogram()
        for i in buckets.indices { d.buckets[i] = buckets[i] &- min(buckets[i], earlier.buckets[i]) }
        d.count = count &- min(count, earlier.count)
        d.sumMicros = sumMicros &- min(sumMicros, earlier.sumMicros)
        if let top = d.buckets.lastIndex(where: { $0 > 0 }) { d.maxMicros = min(maxMicros, UInt64(Self.upperBound(top))) }
        return d
    }

    /// Samples at or below `micros` (for Prometheus `le` buckets; exact at bucket bounds).
    public func countAtOrBelow(micros: Double) -> UInt64 {
        var total: UInt64 = 0
        for (i, n) in buckets.enumerated() where Self.upperBound(i) <= micros * 1.000001 { total += n }
        return total
    }
}
