import Testing
@testable import SpyglassTransport
@testable import SpyglassBitstream

/// ``H264Depacketizer``: RFC 6184 payloads built byte by byte, NAL units out. No sockets.
///
/// NAL unit header (§1.3): F (1 bit) | NRI (2) | Type (5). The units used:
/// 0x67 SPS, 0x68 PPS, 0x65 IDR slice (NRI 3), 0x41 non-IDR slice (NRI 2).
@Suite struct H264DepacketizerTests {
    struct Out {
        var units: [NALUnit] = []
        var counters = DepacketizerCounters()
        var bytes: [[UInt8]] { units.map(\.bytes) }
    }

    /// Pushes payloads in order; `lossBefore` holds the indexes of payloads that follow a gap.
    /// Payload k arrives at µs 1000 × (k + 1).
    private func depacketize(_ payloads: [[UInt8]], lossBefore: Set<Int> = [], maxUnitBytes: Int = 16 << 20) -> Out {
        var d = H264Depacketizer(maxUnitBytes: maxUnitBytes)
        var out = Out()
        for (k, p) in payloads.enumerated() {
            d.push(p[...], arrivalMicros: UInt64(1000 * (k + 1)), lossBefore: lossBefore.contains(k)) { out.units.append($0) }
        }
        out.counters = d.counters
        return out
    }

    private let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33, 0xFF, 0x10, 0x20]

    // MARK: single NAL unit packets (§5.6)

    @Test func aSingleNALUnitPacketIsTheNALUnitWhole() {
        let out = depacketize([idr])
        #expect(out.bytes == [idr])
        #expect(out.units.first?.firstByteMicros == 1000)
        #expect(out.units.first?.lastByteMicros == 1000)
        #expect(out.units.first?.damaged == false)
        #expect(out.counters == DepacketizerCounters())
    }

    /// Types 1...23 are NAL unit types, each carried whole.
    @Test func everyNALUnitTypeFrom1To23IsASingleNALUnitPacket() {
        let payloads = (1...23).map { [UInt8(0x60 | $0), 0xAB] }
        let out = depacketize(payloads)
        #expect(out.bytes == payloads)
        #expect(out.counters == DepacketizerCounters())
    }

    // MARK: STAP-A (§5.7.1)

    /// STAP-A header (F|NRI|24), then per unit a 16-bit size and the unit.
    @Test func aSTAPAGivesEachOfItsUnitsInOrder() {
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xD9]
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let stap: [UInt8] = [0x78] + [0x00, 0x05] + sps + [0x00, 0x04] + pps + [0x00, 0x08] + idr
        let out = depacketize([stap])
        #expect(out.bytes == [sps, pps, idr])
        #expect(out.units.allSatisfy { $0.firstByteMicros == 1000 && $0.lastByteMicros == 1000 && !$0.damaged })
        #expect(out.counters == DepacketizerCounters())
    }

    /// A size that runs past the end of the packet: the units before it are good, the rest is counted.
    @Test func aSTAPASizePastTheEndIsCountedMalformedAfterTheGoodUnits() {
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E]
        let stap: [UInt8] = [0x78] + [0x00, 0x04] + sps + [0x00, 0x09] + [0x68, 0xCE, 0x3C]
        let out = depacketize([stap])
        #expect(out.bytes == [sps])
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    @Test func aSTAPAUnitOfSizeZeroIsCountedMalformed() {
        let out = depacketize([[0x78, 0x00, 0x00, 0x00, 0x02, 0x68, 0xCE]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    /// A STAP-A holding no whole unit: a header alone, or one byte where a size should be.
    @Test
    func aSTAPAWithAnIncompleteSizeFieldIsCountedMalformed() {
        #expect(depacketize([[0x78]]).counters == DepacketizerCounters(malformed: 1))
        let out = depacketize([[0x78, 0x00, 0x02, 0x68, 0xCE, 0x00]])
        #expect(out.bytes == [[0x68, 0xCE]])
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    // MARK: FU-A (§5.8)

    /// FU indicator: F|NRI of the unit, type 28. FU header: S|E|R|unit type.
    private func fuA(_ unit: [UInt8], cuts: [Int], rBit: Bool = false) -> [[UInt8]] {
        let indicator = (unit[0] & 0xE0) | 28
        let body = Array(unit.dropFirst())
        var out: [[UInt8]] = []
        var start = 0
        let ends = cuts + [body.count]
        for (k, end) in ends.enumerated() {
            var header = unit[0] & 0x1F
            if k == 0 { header |= 0x80 }
            if k == ends.count - 1 { header |= 0x40 }
            if rBit { header |= 0x20 }
            out.append([indicator, header] + body[start..<end])
            start = end
        }
        return out
    }

    @Test func fuAStartMiddleEndRebuildsTheUnit() {
        let fragments = fuA(idr, cuts: [2, 5])
        #expect(fragments.map { $0[1] } == [0x85, 0x05, 0x45], "S, neither, E")
        var d = H264Depacketizer()
        var units: [NALUnit] = []
        for (k, f) in fragments.enumerated() {
            d.push(f[...], arrivalMicros: UInt64(10 * (k + 1)), lossBefore: false) { units.append($0) }
            if k < 2 {
                #expect(units.isEmpty, "nothing before the end fragment")
                #expect(d.hasPartialUnit)
            }
        }
        #expect(units.map(\.bytes) == [idr])
        #expect(units.first?.firstByteMicros == 10, "arrival of the start fragment")
        #expect(units.first?.lastByteMicros == 30, "arrival of the end fragment")
        #expect(units.first?.damaged == false)
        #expect(!d.hasPartialUnit)
        #expect(d.counters == DepacketizerCounters())
    }

    /// The rebuilt header takes F and NRI from the FU indicator and the type from the FU header.
    @Test func fuAHeaderIsRebuiltFromIndicatorNRIAndFUType() {
        let slice: [UInt8] = [0x41, 0x9A, 0x02, 0x03, 0x04]   // NRI 2, type 1
        let fragments = fuA(slice, cuts: [2])
        #expect(fragments.map { $0[0] } == [0x5C, 0x5C], "indicator: NRI 2, type 28")
        #expect(depacketize(fragments).bytes == [slice])
    }

    /// §5.8: "The receiver MUST ignore" the R bit.
    @Test func fuAReservedBitIsIgnored() {
        let out = depacketize(fuA(idr, cuts: [3], rBit: true))
        #expect(out.bytes == [idr])
        #expect(out.counters == DepacketizerCounters())
    }

    /// The middle fragment is lost: the start goes on alone, marked damaged (the decoder can use
    /// it and conceal the rest); the end fragment is not glued on.
    @Test func aLostMiddleFragmentPassesOnTheStartMarkedDamagedAndCountsIt() {
        let fragments = fuA(idr, cuts: [2, 5])
        let out = depacketize([fragments[0], fragments[2]], lossBefore: [1])
        #expect(out.bytes == [[0x65] + idr[1..<3]])
        #expect(out.units.first?.damaged == true)
        #expect(out.counters.damagedUnits >= 1)
        #expect(out.counters.malformed == 0)
    }

    /// One NAL unit cut by one lost fragment is one damaged unit.
    @Test
    func aUnitCutByALostMiddleFragmentIsCountedOnce() {
        let fragments = fuA(idr, cuts: [2, 5])
        #expect(depacketize([fragments[0], fragments[2]], lossBefore: [1]).counters.damagedUnits == 1)
    }

    @Test func aLostStartFragmentDropsTheRestAndCountsIt() {
        let fragments = fuA(idr, cuts: [3])
        let out = depacketize([fragments[1]], lossBefore: [0])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(damagedUnits: 1))
    }

    /// The end fragment is lost and a single NAL unit packet follows the gap: the partial unit goes
    /// on damaged, before the next unit.
    @Test func aLostEndFragmentPassesOnThePartialUnitBeforeTheNextOne() {
        let fragments = fuA(idr, cuts: [2, 5])
        let next: [UInt8] = [0x41, 0x9A, 0x55]
        let out = depacketize([fragments[0], fragments[1], next], lossBefore: [2])
        #expect(out.bytes == [[0x65] + idr[1..<6], next])
        #expect(out.units.map(\.damaged) == [true, false])
        #expect(out.counters == DepacketizerCounters(damagedUnits: 1))
    }

    /// A start fragment while a unit is still open (its end never came, and no gap was seen):
    /// the open unit goes on damaged, the new one is rebuilt whole.
    @Test func aNewStartBeforeTheEndAbandonsTheOpenUnit() {
        let a = fuA(idr, cuts: [3])
        let slice: [UInt8] = [0x41, 0x9A, 0x02, 0x03, 0x04]
        let b = fuA(slice, cuts: [2])
        let out = depacketize([a[0], b[0], b[1]])
        #expect(out.bytes == [[0x65] + idr[1..<4], slice])
        #expect(out.units.map(\.damaged) == [true, false])
        #expect(out.counters == DepacketizerCounters(damagedUnits: 1))
    }

    @Test func resetForgetsThePartialUnit() {
        let fragments = fuA(idr, cuts: [3])
        var d = H264Depacketizer()
        var units: [NALUnit] = []
        d.push(fragments[0][...], arrivalMicros: 1, lossBefore: false) { units.append($0) }
        d.reset()
        #expect(!d.hasPartialUnit)
        d.push(fragments[1][...], arrivalMicros: 2, lossBefore: false) { units.append($0) }
        #expect(units.isEmpty, "the end fragment has no start to join any more")
    }

    // MARK: malformed and unsupported

    @Test func anEmptyPayloadIsCountedMalformed() {
        let out = depacketize([[]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    @Test func anFUAWithoutItsFUHeaderIsCountedMalformed() {
        let out = depacketize([[0x7C]])
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(malformed: 1))
    }

    /// §5.8 says "the Start bit and End bit MUST NOT both be set to one in the same FU header",
    /// but ffmpeg's H.264 depacketizer takes such a fragment as a whole unit, and so do we: a sender
    /// that does it still shows its pictures. (H.265 differs: see H265DepacketizerTests.)
    @Test
    func anFUAWithStartAndEndBothSetIsTakenAsAWholeUnitAsFFmpegDoes() {
        let out = depacketize([[0x7C, 0xC5, 0x88, 0x84]])
        #expect(out.bytes == [[0x65, 0x88, 0x84]])
        #expect(out.units.first?.damaged == false)
        #expect(out.counters == DepacketizerCounters())
    }

    /// STAP-B 25, MTAP16 26, MTAP24 27, FU-B 29 (interleaved mode, §5.7.2, §5.8), reserved 0, 30, 31.
    @Test func interleavedModeAndReservedTypesAreCountedUnsupported() {
        let payloads: [[UInt8]] = [25, 26, 27, 29, 0, 30, 31].map { [UInt8(0x60 | $0), 0x00, 0x02, 0x41, 0x9A] }
        let out = depacketize(payloads)
        #expect(out.units.isEmpty)
        #expect(out.counters == DepacketizerCounters(unsupported: 7))
    }
}
