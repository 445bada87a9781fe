import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// The latency log's numbers: written for every picture, so without Foundation's formatter, and
/// the same text `%.3f` gives.
@Suite struct LatencyLogTests {
    @Test func threeDecimalsMatchPrintf() {
        var rng = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 1, -1, 0.1, 0.0004, -0.0004, 0.9996, 12.3456, 999.9994, 123_456.789, -42.0001, 1e11]
        for _ in 0..<20_000 { values.append(Double.random(in: -1_000...10_000, using: &rng)) }
        for _ in 0..<5_000 { values.append(Double(Int.random(in: -100_000...100_000, using: &rng)) / 1000) }
        // Exact ties (x.yyy5 in binary) may round either way in the last digit; random doubles hit none.
        let mismatches = values.filter { LatencyRecorder.threeDecimals($0) != String(format: "%.3f", $0) }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { "\($0): \(LatencyRecorder.threeDecimals($0)) vs \(String(format: "%.3f", $0))" })")
    }

    @Test func nonFiniteFallsBackToPrintf() {
        #expect(LatencyRecorder.threeDecimals(.nan) == String(format: "%.3f", Double.nan))
        #expect(LatencyRecorder.threeDecimals(.infinity) == String(format: "%.3f", Double.infinity))
    }
}
