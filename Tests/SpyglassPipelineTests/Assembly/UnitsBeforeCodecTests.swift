import Testing
@testable import SpyglassBitstream
@testable import SpyglassPipeline

/// The units kept while the codec is unknown are bounded in bytes as well as in number, and a
/// silent feed lets them go (issue 17: a flood of random datagrams kept a 21 MB "unit" for good).
@Suite struct UnitsBeforeCodecTests {
    /// A unit that names no codec: the forbidden bit set (ITU-T H.264 §7.4.1, H.265 §7.4.2.2).
    static func garbage(_ bytes: Int, tag: UInt8) -> NALUnit {
        NALUnit(bytes: [0x80, tag] + [UInt8](repeating: tag, count: bytes - 2))
    }

    @Test func theNewestUnitsAreKeptWithinTheByteCap() {
        var held = UnitsBeforeCodec()
        for i in 0..<20 { held.append(Self.garbage(1 << 20, tag: UInt8(i))) }
        #expect(held.bytes <= UnitsBeforeCodec.maxBytes)
        #expect(held.units.count == UnitsBeforeCodec.maxBytes / (1 << 20))
        #expect(held.units.last?.bytes[1] == 19 && held.units.first?.bytes[1] == UInt8(20 - held.units.count))
        #expect(held.dropped == 20 - held.units.count)
    }

    @Test func aUnitOverTheByteCapIsNeverKept() {
        var held = UnitsBeforeCodec()
        held.append(Self.garbage(UnitsBeforeCodec.maxBytes + 1, tag: 1))
        #expect(held.isEmpty && held.bytes == 0 && held.dropped == 1)
    }

    @Test func theUnitCountIsCappedToo() {
        var held = UnitsBeforeCodec()
        for i in 0..<(UnitsBeforeCodec.maxUnits + 10) { held.append(Self.garbage(4, tag: UInt8(i & 0x7F))) }
        #expect(held.units.count == UnitsBeforeCodec.maxUnits && held.dropped == 10)
    }

    /// The stage keeps at most the byte cap of units that name no codec, counts what it let go as
    /// units without a picture, and forgets the rest when told (the feed went silent).
    @Test func theStageHoldsGarbageBoundedAndForgetsIt() {
        var stage = AccessUnitStage()
        for i in 0..<24 { stage.push(Self.garbage(1 << 20, tag: UInt8(i)), codecHint: nil) { _ in } }
        #expect(stage.codec == nil, "24 units with the forbidden bit name no codec")
        #expect(stage.heldBytes > 0 && stage.heldBytes <= UnitsBeforeCodec.maxBytes)
        let keptBefore = stage.heldBytes / (1 << 20)
        #expect(stage.counts[.unitsWithoutPicture] == 24 - keptBefore)
        stage.forgetHeldUnits()
        #expect(stage.heldBytes == 0)
        #expect(stage.counts[.unitsWithoutPicture] == 24)
    }
}
