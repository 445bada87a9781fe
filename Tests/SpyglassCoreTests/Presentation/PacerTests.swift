import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline

/// ``Pacer``: release of unit k at `max(arrival_k, release_{k-1} + period)`, on a made-up clock.
@Suite struct PacerTests {
    private func releases(fps: Double?, arrivals: [UInt64]) -> [UInt64] {
        var p = Pacer(framesPerSecond: fps)
        return arrivals.map { p.releaseTime(arrivalMicros: $0) }
    }

    @Test(arguments: [(30.0, 33_333 as UInt64), (25, 40_000), (60, 16_666), (1, 1_000_000)])
    func thePeriodIsOneSecondOverTheRate(fps: Double, period: UInt64) {
        #expect(Pacer(framesPerSecond: fps).periodMicros == period)
    }

    /// nil, 0 or a negative rate: untimed, each unit released when it arrives, even out of order.
    @Test(arguments: [nil, 0, -25] as [Double?])
    func withoutARateEveryUnitIsReleasedOnArrival(fps: Double?) {
        #expect(Pacer(framesPerSecond: fps).periodMicros == 0)
        let arrivals: [UInt64] = [5_000, 5_000, 5_001, 4_000, 90_000]
        #expect(releases(fps: fps, arrivals: arrivals) == arrivals)
    }

    /// A file: every unit is there at once; they go out one period apart from the first.
    @Test func unitsThatArriveTogetherGoOutOnePeriodApart() {
        #expect(releases(fps: 25, arrivals: [1_000, 1_000, 1_000, 1_000]) == [1_000, 41_000, 81_000, 121_000])
    }

    /// A pipe fed in real time at the stream's rate: no added wait.
    @Test func unitsArrivingAtTheRateAreReleasedOnArrival() {
        let arrivals: [UInt64] = (0..<5).map { 7_000 + UInt64($0) * 40_000 }
        #expect(releases(fps: 25, arrivals: arrivals) == arrivals)
    }

    /// A pipe faster than the rate is slowed to it.
    @Test func unitsArrivingFasterThanTheRateAreSpacedToIt() {
        #expect(releases(fps: 25, arrivals: [0, 20_000, 40_000, 60_000]) == [0, 40_000, 80_000, 120_000])
    }

    /// Unit 2 is 200 ms late: it goes out on arrival, and the units queued behind it follow one
    /// period apart from it. The time lost is not made up by releasing them in a burst.
    @Test func aLateUnitDoesNotBuildADebt() {
        #expect(releases(fps: 25, arrivals: [0, 40_000, 280_000, 280_000, 280_000])
                == [0, 40_000, 280_000, 320_000, 360_000])
    }

    @Test func theFirstUnitIsReleasedOnArrival() {
        #expect(releases(fps: 30, arrivals: [123_456_789]) == [123_456_789])
    }
}
