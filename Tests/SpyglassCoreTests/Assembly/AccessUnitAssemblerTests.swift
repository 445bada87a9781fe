import XCTest
@testable import SpyglassCore

final class AccessUnitAssemblerTests: XCTestCase {
    /// The NAL units of a capture.
    private func units(_ name: String) throws -> [NALUnit] {
        var s = AnnexBScanner()
        var out: [NALUnit] = []
        s.push(try Fixtures.bytes(Fixtures.capture(name)), arrivalMicros: 0) { out.append($0) }
        s.flush(atMicros: 0, reason: .endOfStream) { out.append($0) }
        return out
    }

    private func assemble(_ units: [NALUnit], codec: VideoCodec) -> [AccessUnit] {
        var a = AccessUnitAssembler(codec: codec)
        var aus: [AccessUnit] = []
        for u in units { if let au = a.push(u) { aus.append(au) } }
        if let au = a.flush(atMicros: 0, reason: .endOfStream) { aus.append(au) }
        return aus
    }

    func testOneAccessUnitPerPictureWithSeveralSlices() throws {
        for (name, codec) in [("test/h264-high-4slices.h264", VideoCodec.h264), ("test/h265-4slices.h265", .h265)] {
            let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture(name)).count
            let aus = assemble(try units(name), codec: codec)
            XCTAssertEqual(aus.count, expected, name)
            for au in aus {
                let slices = au.units.filter { NALUnitHeader(codec: codec, bytes: $0.bytes)!.isVCL }.count
                XCTAssertEqual(slices, 4, "\(name) AU \(au.index)")
            }
        }
    }

    func testSEIAndParameterSetsBeforeTheFirstSliceBelongToItsAccessUnit() throws {
        let aus = assemble(try units("test/h264-baseline.h264"), codec: .h264)
        let first = aus[0].units.map { NALUnitHeader(codec: .h264, bytes: $0.bytes)!.type }
        XCTAssertEqual(first.filter { $0 == 7 }.count, 1)
        XCTAssertTrue(first.contains(6), "x264's SEI is part of the first access unit")
        XCTAssertEqual(first.last, 5, "IDR slice last: \(first)")
        XCTAssertTrue(aus[0].isRandomAccessPoint && aus[0].hasParameterSets)
        XCTAssertFalse(aus[1].isRandomAccessPoint)
    }

    func testAUDStreamsStartEachAccessUnitWithTheDelimiter() throws {
        let aus = assemble(try units("test/h264-aud.h264"), codec: .h264)
        XCTAssertEqual(aus.count, try Fixtures.ffmpegFrameMD5(Fixtures.capture("test/h264-aud.h264")).count)
        for au in aus { XCTAssertEqual(au.units.first?.bytes.first.map { $0 & 0x1F }, 9) }
    }

    func testGroupsWithoutAPictureAreNeverAccessUnits() {
        var a = AccessUnitAssembler(codec: .h264)
        let aud = NALUnit(bytes: [0x09, 0xF0])
        let filler = NALUnit(bytes: [0x0C, 0xFF, 0xFF, 0x80])
        XCTAssertNil(a.push(aud))
        XCTAssertNil(a.push(filler))
        XCTAssertNil(a.flush(atMicros: 0, reason: .idleGap), "an idle gap never closes a group with no picture")
        XCTAssertNil(a.flush(atMicros: 0, reason: .endOfStream))
        XCTAssertEqual(a.counters.accessUnits, 0)
        XCTAssertEqual(a.counters.unitsWithoutPicture, 2)
    }

    func testIdleFlushCompletesThePictureAtOnce() throws {
        let all = try units("test/h264-baseline.h264")
        var a = AccessUnitAssembler(codec: .h264)
        var firstAU: AccessUnit?
        for u in all {
            if let au = a.push(u) { firstAU = au; break }
            if NALUnitHeader(codec: .h264, bytes: u.bytes)!.isVCL {
                firstAU = a.flush(atMicros: 5, reason: .idleGap)
                break
            }
        }
        XCTAssertEqual(firstAU?.completion, .idleGap)
        XCTAssertEqual(firstAU?.index, 0)
    }

    func testEndOfSequenceClosesTheAccessUnit() {
        var a = AccessUnitAssembler(codec: .h264)
        // An IDR slice with first_mb_in_slice = 0 (ue '1'), then end of sequence.
        XCTAssertNil(a.push(NALUnit(bytes: [0x65, 0x88, 0x84])))
        let au = a.push(NALUnit(bytes: [0x0A]))
        XCTAssertEqual(au?.completion, .endOfSequence)
        XCTAssertEqual(au?.units.count, 2)
        XCTAssertNil(a.push(NALUnit(bytes: [0x0B])))
        XCTAssertNil(a.flush(atMicros: 0, reason: .endOfStream))
        XCTAssertEqual(a.counters.accessUnits, 1)
    }

    func testForbiddenBitUnitsAreDroppedAndCounted() {
        var a = AccessUnitAssembler(codec: .h265)
        XCTAssertNil(a.push(NALUnit(bytes: [0x80, 0x01, 0x00])))
        XCTAssertNil(a.push(NALUnit(bytes: [0x40, 0x00])))   // temporal id 0
        XCTAssertEqual(a.counters.invalidUnits, 2)
    }

    func testCodecDetection() throws {
        for (name, codec) in [("test/h264-baseline.h264", VideoCodec.h264), ("test/h264-aud.h264", .h264),
                              ("test/h265-main.h265", .h265), ("test/h265-main10.h265", .h265)] {
            var d = CodecDetector()
            var decided: VideoCodec?
            for u in try units(name) { if let c = d.observe(u.bytes) { decided = c; break } }
            XCTAssertEqual(decided, codec, name)
        }
    }
}
