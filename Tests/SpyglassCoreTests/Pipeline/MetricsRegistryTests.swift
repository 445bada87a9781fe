import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport

@Suite struct MetricsRegistryTests {
    /// A stage replaced mid-run (codec switch, decoder swap): what it counted stays in the total.
    @Test func countersNeverGoBackwardsWhenAStageIsReplaced() {
        let m = MetricsRegistry()
        m.publish(group: .decoder, [.decodeErrors: 3])
        #expect(m.snapshot()[.decodeErrors] == 3)
        m.retire(group: .decoder)
        m.publish(group: .decoder, [.decodeErrors: 1])   // the new decoder counts from 0
        #expect(m.snapshot()[.decodeErrors] == 4)
        m.add(.decodeErrors, 2)
        #expect(m.snapshot()[.decodeErrors] == 6)
    }

    /// Percentiles from fixed buckets stay within the bucket width (1/16 octave, about 4.4 %).
    @Test func histogramQuantilesAreWithinABucketOfTheTruth() throws {
        var h = Histogram()
        var rng = SeededRandom(seed: 9)
        var samples: [UInt64] = []
        for _ in 0..<10_000 {
            let v = UInt64(rng.next(in: 200...40_000))
            samples.append(v)
            h.record(v)
        }
        samples.sort()
        for q in [0.5, 0.9, 0.99] {
            let truth = Double(samples[Int((q * Double(samples.count)).rounded(.up)) - 1])
            let got = try #require(h.quantileMicros(q))
            #expect(abs(got - truth) / truth < 0.045, "q\(q): \(got) against \(truth)")
        }
        #expect(h.count == 10_000)
        #expect(h.maxMicros == samples.last!)
        #expect(Histogram().quantileMicros(0.5) == nil)
    }

    @Test func prometheusBucketsCountSamplesAtOrBelowTheBound() {
        var h = Histogram()
        for v: UInt64 in [100, 1000, 1000, 5000] { h.record(v) }
        #expect(h.countAtOrBelow(micros: 1024) == 3)
        #expect(h.countAtOrBelow(micros: 1_048_576) == 4)
        #expect(h.countAtOrBelow(micros: 50) == 0)
    }
}

/// `spyglass_feed_state`: every state the docs name has its line, so a feed that is still
/// connecting (a camera down when the wall started) is not a feed in no state at all.
@Suite struct FeedStateExpositionTests {
    @Test(arguments: [(PipelineState.connecting("Connection refused"), "connecting"), (.reconnecting, "reconnecting"),
                      (.waitingForData, "waiting_for_data"), (.failed("x"), "failed")])
    func theFeedsStateIsOne(state: PipelineState, name: String) {
        let text = MetricsExposition.text([FeedMetrics(feed: "1 tcp://cam:8888", state: state, snapshot: MetricsRegistry().snapshot())],
                                          nowMicros: 0)
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("spyglass_feed_state{") }
        #expect(lines.count == 8, "one line per state: \(lines)")
        #expect(lines.filter { $0.hasSuffix(" 1") } == ["spyglass_feed_state{feed=\"1 tcp://cam:8888\",state=\"\(name)\"} 1"])
    }
}
