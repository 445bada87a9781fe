import Testing
@testable import SpyglassTransport
@testable import SpyglassBitstream

/// ``H265Depacketizer``: RFC 7798 payloads built byte by byte, NAL units out. No sockets.
///
/// NAL unit header (§1.1.4, H.265 §7.3.1.2), two bytes: F (1 bit) | Type (6) | LayerId (6) | TID (3).
/// The units used: 40 01 VPS, 42 01 SPS, 44 01 PPS, 26 01 IDR_W_RADL, 02 01 TRAIL_R.
@Suite struct H265DepacketizerTests {
    struct Out {
        var units: [NALUnit] = []
        var counters = DepacketizerCounters()
        var bytes: [[UInt8]] { units.map(\.bytes) }
    }

    /// Pushes payloads in order; `lossBefore` holds the indexes of payloads that follow a gap.
    /// Payload k arrives at µs 1000 × (k + 1).
    private func depacketize(_ payloads: [[UInt8]], lossBefore: Set<Int> = []) -> Out {
        var d = H265Depacketizer()
        var out = Out()
        for (k, p) in payloads.enumerated() {
            d.push(p[...], arrivalMicros: UInt64(1000 * (k + 1)), lossBefore: lossBefore.contains(k)) { out.units.append($0) }
        }
        out.counters = d.counters
        return out
    }

    private let idr: [UInt8] = [0x26, 0x01, 0xAF, 0x08, 0x40, 0x00, 0x13, 0x7F, 0x21]

    // MARK: single NAL unit packets (§4.4.1)

    @Test func aSingleNALUnitPacketIsTheNALUnitWhole() {
        let out = depacketize([idr])
        #expect(out.bytes == [idr])
        #expect(out.units.first?.firstByteMicros == 1000)
        #expect(out.units.first?.lastByteMicros == 1000)
        #expect(out.units.first?.damaged == false)
        #expect(out.counters == DepacketizerCounters())
    }

    /// Types 0...47 are NAL unit types, each carried whole.
    @Test func everyNALUnitTypeFrom0To47IsASingleNALUnitPacket() {
        let payloads = (0...47).map { [UInt8($0 << 1), 0x01, 0xAB] }
        let out = depacketize(payloads)
        #expect(out.bytes == payloads)
        #expect(out.counters == DepacketizerCounters())
    }

    // MARK: aggregation packets (§4.4.2)

    /// AP: payload header with type 48, then per unit a 16-bit size and the unit (no DONL).
    @Test func anAggregationPacketGivesEachOfItsUnitsInOrder() {
        let vps: [UInt8] = [0x40, 0x01, 0x0C, 0x01]
        let sps: [UInt8] = [0x42, 0x01, 0x01, 0x01, 0x60]
        let pps: [UInt8] = [0x44, 0x01, 0xC1, 0x72]
        let ap: [UInt8] = [0x60, 0x01] + [0x00, 0x04] + vps + [0x00, 0x05] + sps + [0x00, 0x04] + pps
        let out = depacketize([ap])
        #expect(out.bytes == [vps, sps, pps])
        #expect(out.units.allSatisfy { $0.firstByteMicros == 1000 && !$0.damaged })
        #expect(out.counters == DepacketizerCounters())
    }

    @Test func anAggregationUnitSizePastTheEndIsCountedMalformedAfterTheGoodUnits() {
        let vps: [UInt8] = [0x40, 0x01, 0x0C, 0x01]
        let ap: [UInt8] = [0x60, 0x01] + [0x00, 0x04] + vps + [0x00, 0x10] + [0x42, 0x01, 0x01]
        let out = depacketize([ap])
        #expect(out.bytes == [vps])
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    /// A unit shorter than its own two-byte header.
    @Test func anAggregationUnitOfOneByteIsCountedMalformed() {
        let out = depacketize([[0x60, 0x01, 0x00, 0x01, 0x26]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    @Test
    func anAggregationPacketWithAnIncompleteSizeFieldIsCountedMalformed() {
        #expect(depacketize([[0x60, 0x01]]).counters == DepacketizerCounters(malformed: 1))
        let out = depacketize([[0x60, 0x01, 0x00, 0x02, 0x44, 0x01, 0x00]])
        #expect(out.bytes == [[0x44, 0x01]])
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    // MARK: fragmentation units (§4.4.3)

    /// Payload header: the unit's header with type 49. FU header: S|E|FuType (6 bits).
    private func fu(_ unit: [UInt8], cuts: [Int]) -> [[UInt8]] {
        let payloadHeader = [(unit[0] & 0x81) | (49 << 1), unit[1]]
        let type = (unit[0] >> 1) & 0x3F
        let body = Array(unit.dropFirst(2))
        var out: [[UInt8]] = []
        var start = 0
        let ends = cuts + [body.count]
        for (k, end) in ends.enumerated() {
            var header = type
            if k == 0 { header |= 0x80 }
            if k == ends.count - 1 { header |= 0x40 }
            out.append(payloadHeader + [header] + body[start..<end])
            start = end
        }
        return out
    }

    @Test func fuStartMiddleEndRebuildsTheUnit() {
        let fragments = fu(idr, cuts: [2, 4])
        #expect(fragments.map { Array($0.prefix(3)) } == [[0x62, 0x01, 0x93], [0x62, 0x01, 0x13], [0x62, 0x01, 0x53]])
        var d = H265Depacketizer()
        var units: [NALUnit] = []
        for (k, f) in fragments.enumerated() {
            d.push(f[...], arrivalMicros: UInt64(10 * (k + 1)), lossBefore: false) { units.append($0) }
            if k < 2 {
                #expect(units.isEmpty, "nothing before the end fragment")
                #expect(d.hasPartialUnit)
            }
        }
        #expect(units.map(\.bytes) == [idr])
        #expect(units.first?.firstByteMicros == 10)
        #expect(units.first?.lastByteMicros == 30)
        #expect(units.first?.damaged == false)
        #expect(!d.hasPartialUnit)
        #expect(d.counters == DepacketizerCounters())
    }

    /// F, LayerId and TID come from the payload header, the type from the FU header.
    @Test func fuHeaderKeepsLayerIdAndTemporalIdOfThePayloadHeader() {
        // IDR_W_RADL with LayerId 33 (its top bit is in the first byte) and TID 1.
        let unit: [UInt8] = [0x27, 0x09, 0xAF, 0x08, 0x40]
        let fragments = fu(unit, cuts: [1])
        #expect(fragments.map { Array($0.prefix(2)) } == [[0x63, 0x09], [0x63, 0x09]])
        #expect(depacketize(fragments).bytes == [unit])
    }

    @Test func aLostMiddleFragmentPassesOnTheStartMarkedDamagedAndCountsIt() {
        let fragments = fu(idr, cuts: [2, 4])
        let out = depacketize([fragments[0], fragments[2]], lossBefore: [1])
        #expect(out.bytes == [Array(idr.prefix(4))])
        #expect(out.units.first?.damaged == true)
        #expect(out.counters.damagedUnits >= 1)
        #expect(out.counters.malformed == 0)
    }

    @Test func aLostStartFragmentDropsTheRestAndCountsIt() {
        let fragments = fu(idr, cuts: [3])
        let out = depacketize([fragments[1]], lossBefore: [0])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(damagedUnits: 1))
    }

    // MARK: malformed and unsupported

    @Test func aPayloadShorterThanItsHeaderIsCountedMalformed() {
        let out = depacketize([[], [0x26]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 2))
    }

    @Test func anFUWithoutItsFUHeaderIsCountedMalformed() {
        let out = depacketize([[0x62, 0x01]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    /// §4.4.3: "the Start bit and End bit must not both be set to 1 in the same FU header".
    @Test
    func anFUWithStartAndEndBothSetIsCountedMalformed() {
        let out = depacketize([[0x62, 0x01, 0xD3, 0xAF, 0x08]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    /// PACI (50, §4.4.4) and the unspecified types 51...63.
    @Test func paciAndUnspecifiedTypesAreCountedUnsupported() {
        let payloads = (50...63).map { [UInt8($0 << 1), 0x01, 0x26, 0x01] }
        let out = depacketize(payloads)
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(unsupported: 14))
    }
}
