import Testing
@testable import SpyglassSession

/// A container's packets, read in decode order, get the presentation times in rank order.
@Suite struct DecodeOrderTimesTests {
    @Test func bFramePacketsGetTheirRanksPresentationTimes() {
        var times = DecodeOrderTimes<Int>()
        var out: [(Int, Int64)] = []
        // Decode order I0 P3 B1 B2 P6 B4 B5, as Matroska stores them (pts only), in ms.
        for (i, pts) in [0, 100, 33, 67, 200, 133, 167].enumerated() { out += times.push(i, pts: Int64(pts)) }
        #expect(out.isEmpty, "held until more than a reorder depth has come")
        out += times.flush()
        #expect(out.map(\.0) == Array(0..<7), "decode order kept")
        #expect(out.map(\.1) == [0, 33, 67, 100, 133, 167, 200])
    }

    @Test func aPacketWithNoTimeIsAFrameAfterTheNewest() {
        var times = DecodeOrderTimes<Int>()
        var out: [(Int, Int64)] = []
        out += times.push(0, pts: 1_000_000)
        out += times.push(1, pts: nil)
        for i in 2..<20 { out += times.push(i, pts: 1_000_000 + Int64(i) * 33_333 + 1) }
        #expect(out.count == 20 - DecodeOrderTimes<Int>.depth, "one out for each in past the depth")
        out += times.flush()
        #expect(out.map(\.1).prefix(2) == [1_000_000, 1_033_333])
        #expect(zip(out.dropFirst(), out).allSatisfy { $0.1 > $1.1 })
    }
}
