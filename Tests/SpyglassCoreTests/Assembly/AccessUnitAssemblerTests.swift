import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline

@Suite struct AccessUnitAssemblerTests {
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

    @Test func oneAccessUnitPerPictureWithSeveralSlices() throws {
        for (name, codec) in [("test/h264-high-4slices.h264", VideoCodec.h264), ("test/h265-4slices.h265", .h265)] {
            let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture(name)).count
            let aus = assemble(try units(name), codec: codec)
            #expect(aus.count == expected, "\(name)")
            for au in aus {
                let slices = au.units.filter { NALUnitHeader(codec: codec, bytes: $0.bytes)!.isVCL }.count
                #expect(slices == 4, "\(name) AU \(au.index)")
            }
        }
    }

    @Test func seiAndParameterSetsBeforeTheFirstSliceBelongToItsAccessUnit() throws {
        let aus = assemble(try units("test/h264-baseline.h264"), codec: .h264)
        let first = aus[0].units.map { NALUnitHeader(codec: .h264, bytes: $0.bytes)!.type }
        #expect(first.filter { $0 == 7 }.count == 1)
        #expect(first.contains(6), "x264's SEI is part of the first access unit")
        #expect(first.last == 5, "IDR slice last: \(first)")
        #expect(aus[0].isRandomAccessPoint && aus[0].hasParameterSets)
        #expect(!aus[1].isRandomAccessPoint)
    }

    @Test func audStreamsStartEachAccessUnitWithTheDelimiter() throws {
        let aus = assemble(try units("test/h264-aud.h264"), codec: .h264)
        #expect(aus.count == (try Fixtures.ffmpegFrameMD5(Fixtures.capture("test/h264-aud.h264")).count))
        for au in aus { #expect(au.units.first?.bytes.first.map { $0 & 0x1F } == 9) }
    }

    @Test func groupsWithoutAPictureAreNeverAccessUnits() {
        var a = AccessUnitAssembler(codec: .h264)
        let aud = NALUnit(bytes: [0x09, 0xF0])
        let filler = NALUnit(bytes: [0x0C, 0xFF, 0xFF, 0x80])
        #expect(a.push(aud) == nil)
        #expect(a.push(filler) == nil)
        #expect(a.flush(atMicros: 0, reason: .idleGap) == nil, "an idle gap never closes a group with no picture")
        #expect(a.flush(atMicros: 0, reason: .endOfStream) == nil)
        #expect(a.counters.accessUnits == 0)
        #expect(a.counters.unitsWithoutPicture == 2)
    }

    @Test func idleFlushCompletesThePictureAtOnce() throws {
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
        #expect(firstAU?.completion == .idleGap)
        #expect(firstAU?.index == 0)
    }

    @Test func endOfSequenceClosesTheAccessUnit() {
        var a = AccessUnitAssembler(codec: .h264)
        // An IDR slice with first_mb_in_slice = 0 (ue '1'), then end of sequence.
        #expect(a.push(NALUnit(bytes: [0x65, 0x88, 0x84])) == nil)
        let au = a.push(NALUnit(bytes: [0x0A]))
        #expect(au?.completion == .endOfSequence)
        #expect(au?.units.count == 2)
        #expect(a.push(NALUnit(bytes: [0x0B])) == nil)
        #expect(a.flush(atMicros: 0, reason: .endOfStream) == nil)
        #expect(a.counters.accessUnits == 1)
    }

    @Test func forbiddenBitUnitsAreDroppedAndCounted() {
        var a = AccessUnitAssembler(codec: .h265)
        #expect(a.push(NALUnit(bytes: [0x80, 0x01, 0x00])) == nil)
        #expect(a.push(NALUnit(bytes: [0x40, 0x00])) == nil)   // temporal id 0
        #expect(a.counters.invalidUnits == 2)
    }

    @Test func codecDetection() throws {
        for (name, codec) in [("test/h264-baseline.h264", VideoCodec.h264), ("test/h264-aud.h264", .h264),
                              ("test/h265-main.h265", .h265), ("test/h265-main10.h265", .h265)] {
            var d = CodecDetector()
            var decided: VideoCodec?
            for u in try units(name) { if let c = d.observe(u.bytes) { decided = c; break } }
            #expect(decided == codec, "\(name)")
        }
    }
}
