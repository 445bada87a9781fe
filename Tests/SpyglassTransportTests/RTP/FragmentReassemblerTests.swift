import Testing
@testable import SpyglassTransport
@testable import SpyglassBitstream

/// ``FragmentReassembler``, the part H.264 FU-A (RFC 6184 §5.8) and H.265 FU (RFC 7798 §4.4.3)
/// share once the codec has rebuilt the NAL unit header. Fragments are pushed directly.
@Suite struct FragmentReassemblerTests {
    /// A reassembler, its counters and what it emitted.
    struct Rig {
        var r: FragmentReassembler
        var counters = DepacketizerCounters()
        var units: [NALUnit] = []

        init(headerSize: Int = 1, maxUnitBytes: Int = 1 << 20) {
            r = FragmentReassembler(headerSize: headerSize, maxUnitBytes: maxUnitBytes)
        }

        mutating func push(_ header: [UInt8], _ body: [UInt8], start: Bool = false, end: Bool = false, at micros: UInt64 = 0) {
            var emitted: [NALUnit] = []
            r.push(header: header, body: body[...], start: start, end: end, arrivalMicros: micros, counters: &counters) { emitted.append($0) }
            units += emitted
        }

        mutating func abandon() {
            var emitted: [NALUnit] = []
            r.abandon(counters: &counters) { emitted.append($0) }
            units += emitted
        }
    }

    @Test func startMiddleEndGiveTheHeaderThenTheBodiesInOrder() {
        var g = Rig()
        g.push([0x65], [1, 2], start: true, at: 100)
        #expect(g.r.active)
        g.push([0x65], [3, 4], at: 200)
        g.push([0x65], [5], end: true, at: 300)
        #expect(g.units.map(\.bytes) == [[0x65, 1, 2, 3, 4, 5]])
        #expect(g.units.first?.firstByteMicros == 100)
        #expect(g.units.first?.lastByteMicros == 300)
        #expect(g.units.first?.damaged == false)
        #expect(!g.r.active)
        #expect(g.counters == DepacketizerCounters())
    }

    /// Only the start fragment's header is used: later fragments' headers are not copied in.
    @Test func aTwoByteHeaderIsTakenFromTheStartFragmentOnly() {
        var g = Rig(headerSize: 2)
        g.push([0x26, 0x01], [0xAA], start: true)
        g.push([0x02, 0x01], [0xBB], end: true)
        #expect(g.units.map(\.bytes) == [[0x26, 0x01, 0xAA, 0xBB]])
    }

    /// The cap counts the whole rebuilt unit, header included.
    @Test func aUnitOfExactlyTheCapIsKept() {
        var g = Rig(maxUnitBytes: 6)
        g.push([0x65], [1, 2], start: true)
        g.push([0x65], [3, 4, 5], end: true)
        #expect(g.units.map(\.bytes) == [[0x65, 1, 2, 3, 4, 5]])
        #expect(g.counters == DepacketizerCounters())
    }

    @Test func aUnitOneByteOverTheCapIsDroppedAndCounted() {
        var g = Rig(maxUnitBytes: 6)
        g.push([0x65], [1, 2], start: true)
        g.push([0x65], [3, 4, 5, 6])
        #expect(!g.r.active, "the unit is given up at once")
        g.push([0x65], [7], end: true)
        #expect(g.units.isEmpty)
        #expect(g.counters.oversizeUnits == 1)
    }

    /// The rest of a unit dropped for size is not a unit whose start was lost.
    @Test
    func fragmentsAfterAnOversizeUnitAreNotCountedDamaged() {
        var g = Rig(maxUnitBytes: 6)
        g.push([0x65], [1, 2], start: true)
        g.push([0x65], [3, 4, 5, 6])
        g.push([0x65], [7])
        g.push([0x65], [8], end: true)
        #expect(g.counters == DepacketizerCounters(oversizeUnits: 1))
    }

    @Test func aContinuationWithoutAStartIsDroppedAndCounted() {
        var g = Rig()
        g.push([0x65], [3, 4])
        #expect(g.units.isEmpty)
        #expect(!g.r.active)
        #expect(g.counters == DepacketizerCounters(damagedUnits: 1))
    }

    @Test func abandonPassesOnWhatArrivedMarkedDamagedAndCountsIt() {
        var g = Rig()
        g.push([0x65], [1, 2], start: true, at: 100)
        g.abandon()
        #expect(g.units.map(\.bytes) == [[0x65, 1, 2]])
        #expect(g.units.first?.damaged == true)
        #expect(g.units.first?.firstByteMicros == 100)
        #expect(!g.r.active)
        #expect(g.counters == DepacketizerCounters(damagedUnits: 1))
    }

    /// A header with no body is no use to a decoder: counted, not passed on.
    @Test func abandonWithOnlyTheHeaderCountsButPassesNothingOn() {
        var g = Rig(headerSize: 2)
        g.push([0x26, 0x01], [], start: true)
        g.abandon()
        #expect(g.units.isEmpty)
        #expect(g.counters == DepacketizerCounters(damagedUnits: 1))
    }

    @Test func abandonWithNoUnitInProgressDoesNothing() {
        var g = Rig()
        g.abandon()
        #expect(g.units.isEmpty)
        #expect(g.counters == DepacketizerCounters())
    }

    @Test func aStartWhileAUnitIsOpenAbandonsItAndStartsTheNext() {
        var g = Rig()
        g.push([0x65], [1, 2], start: true)
        g.push([0x41], [9], start: true)
        g.push([0x41], [8], end: true)
        #expect(g.units.map(\.bytes) == [[0x65, 1, 2], [0x41, 9, 8]])
        #expect(g.units.map(\.damaged) == [true, false])
        #expect(g.counters == DepacketizerCounters(damagedUnits: 1))
    }

    @Test func resetForgetsTheUnitWithoutCountingIt() {
        var g = Rig()
        g.push([0x65], [1, 2], start: true)
        g.r.reset()
        #expect(!g.r.active)
        g.abandon()
        #expect(g.units.isEmpty)
        #expect(g.counters == DepacketizerCounters())
    }

    /// The last byte of an abandoned unit arrived with its last fragment, not its first.
    @Test
    func abandonStampsTheLastFragmentsArrival() {
        var g = Rig()
        g.push([0x65], [1, 2], start: true, at: 100)
        g.push([0x65], [3, 4], at: 200)
        g.abandon()
        #expect(g.units.first?.lastByteMicros == 200)
    }
}
