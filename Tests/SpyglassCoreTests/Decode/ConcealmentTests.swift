import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline

/// A picture libavcodec had to conceal (corrupt slice data, no transport loss to say so) is
/// damaged, and so is every picture predicted from it, until the next IDR.
@Suite struct ConcealmentTests {
    @Test func picturesPredictedFromAConcealedOneAreDamagedUntilTheNextIDR() throws {
        let clip = Fixtures.capture("test/h264-baseline.h264")     // two IDRs, P pictures between
        let parsed = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(clip)).1
        var aus = parsed.map { $0.annexB() }
        let idr = try #require(parsed.indices.first { $0 > 5 && parsed[$0].isRandomAccessPoint })
        // Corrupt the middle of picture 5's slice data: the container (none) and the NAL
        // headers stay intact, only the decoder can see it.
        let mid = aus[5].count / 2
        for i in mid..<min(aus[5].count, mid + 24) { aus[5][i] ^= 0x5A }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("conceal-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = "\(dir)/corrupt.h264"
        try Data(aus.flatMap { $0 }).write(to: URL(fileURLWithPath: path))
        let r = try Harness.decodeFile(path)
        try #require(r.damaged.count == aus.count, "every picture still comes out")
        #expect(r.damaged[0..<5].allSatisfy { !$0 }, "before the corruption")
        #expect(r.damaged[5], "the concealed picture")
        #expect(r.damaged[6..<idr].allSatisfy { $0 }, "predicted from it: \(r.damaged[6..<idr])")
        #expect(r.damaged[idr...].allSatisfy { !$0 }, "clean from the next IDR")
        #expect(r.summary.framesWithDamagedReferences == idr - 6)
    }
}
