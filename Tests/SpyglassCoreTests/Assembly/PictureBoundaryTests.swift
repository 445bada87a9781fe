import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassPipeline

/// Picture boundaries come from the slice headers (H.264 §7.4.1.2.4, H.265
/// `first_slice_segment_in_pic_flag`): parameter sets or SEI repeated between the slices of one
/// picture stay with that picture.
@Suite struct PictureBoundaryTests {
    /// The stream with its parameter sets (and an SEI) written again before every slice of every
    /// random-access picture, as some RTP payloaders do.
    static func repeatingParameterSets(_ bytes: [UInt8], codec: VideoCodec) -> [UInt8] {
        var scanner = AnnexBScanner()
        var units: [[UInt8]] = []
        scanner.push(bytes, arrivalMicros: 0) { units.append($0.bytes) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        var sets: [[UInt8]] = []
        var out: [UInt8] = []
        for u in units {
            guard let h = NALUnitHeader(codec: codec, bytes: u) else { continue }
            if h.isParameterSet { sets.removeAll { NALUnitHeader(codec: codec, bytes: $0)?.type == h.type }; sets.append(u) }
            if h.isRandomAccessPoint && !sets.isEmpty {
                for s in sets { out += [0, 0, 0, 1] + s }
            }
            out += [0, 0, 0, 1] + u
        }
        return out
    }

    @Test(arguments: [("test/h264-high-4slices.h264", VideoCodec.h264), ("test/h265-4slices.h265", .h265)])
    func parameterSetsBeforeEverySliceKeepThePictureWhole(name: String, codec: VideoCodec) throws {
        let stream = Self.repeatingParameterSets(try Fixtures.bytes(Fixtures.capture(name)), codec: codec)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ps-every-slice-\(getpid())-\(codec).bin").path
        try Data(stream).write(to: URL(fileURLWithPath: path))
        // The pictures the encoder wrote: ffmpeg on the original stream. (ffmpeg's own Annex B
        // parser cuts such a picture at the repeated SPS, so it is no reference for this file.)
        let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture(name))
        #expect(expected.count > 0)
        let got = try Harness.decodeFile(path)
        #expect(got.hashes == expected)
        #expect(got.summary.accessUnits == expected.count, "one access unit per picture")
        #expect(got.summary.decodeErrors == 0)
        #expect(got.damaged.allSatisfy { !$0 })
    }

    /// Units held between slices are bounded: a flood of 10,000 SEI after a picture becomes at
    /// most ``AccessUnitAssembler/maxHeldUnits`` units of held prefix, then units of no picture
    /// dropped in batches of at most ``AccessUnitAssembler/maxUnitsPerAccessUnit``; the picture
    /// before the flood and the one after it both come out, neither carrying the flood.
    @Test func aFloodOfSEIAfterAPictureIsBounded() throws {
        var asm = AccessUnitAssembler(codec: .h264)
        var aus: [AccessUnit] = []
        let units = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-baseline.h264")))
        var scanner = AnnexBScanner()
        scanner.push(units[0] + units[1], arrivalMicros: 0) { if let au = asm.push($0) { aus.append(au) } }
        let flood = 10_000
        for _ in 0..<flood { if let au = asm.push(NALUnit(bytes: [0x06, 0x05, 0x01, 0x00, 0x80])) { aus.append(au) } }
        #expect(aus.count >= 1, "the picture before the flood came out")
        scanner.push(units[2], arrivalMicros: 1) { if let au = asm.push($0) { aus.append(au) } }
        if let au = asm.flush(atMicros: 2, reason: .endOfStream) { aus.append(au) }
        let pictures = aus.filter { au in au.units.contains { $0.header?.isVCL == true } }
        #expect(pictures.count == aus.count && aus.count >= 2, "\(aus.count) access units, \(pictures.count) with a picture")
        let seiPerUnit = aus.map { au in au.units.filter { $0.header?.kind == .sei }.count }
        #expect(seiPerUnit.allSatisfy { $0 <= AccessUnitAssembler.maxUnitsPerAccessUnit }, "SEI per access unit: \(seiPerUnit)")
        #expect(asm.counters.unitsWithoutPicture > 0, "units of no picture were dropped, not kept")
        #expect(seiPerUnit.reduce(0, +) + asm.counters.unitsWithoutPicture <= flood + 10, "every flooded SEI is kept once or counted")
    }
}
