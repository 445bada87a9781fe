import Testing
@testable import SpyglassFeed
import SpyglassPipeline

/// `PresentationStamper`: decode order in, each picture's pts (when a decoder could show it, or
/// its capture time) and a rising dts out.
@Suite struct PresentationStamperTests {
    /// I0 P3 B1 B2 P6 B4 B5 (POC in frames) arriving 10 ms apart, two pictures held for reorder.
    static let pocs = [0, 3, 1, 2, 6, 4, 5]

    @Test func arrivalTimedPicturesArePresentedWhenADecoderCouldShowThem() {
        var s = PresentationStamper<Int>(reorderDepth: 2)
        var out: [PresentationStamper<Int>.Stamped] = []
        for (i, poc) in Self.pocs.enumerated() {
            out += s.push(i, order: PictureOrder(epoch: 0, count: 2 * poc), sourceMicros: Int64(i) * 10_000, atCapture: false)
        }
        out += s.flush()
        #expect(out.map(\.payload) == Array(0..<7), "decode order kept")
        // Output order I0 B1 B2 P3 B4 B5 P6: the k-th leaves the buffer at the arrival of AU k + 2.
        let ptsByPOC = Dictionary(uniqueKeysWithValues: zip(Self.pocs, out.map(\.pts)))
        #expect((0..<7).map { ptsByPOC[$0]! } == [20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000])
        #expect(zip(out.dropFirst(), out).allSatisfy { $0.dts >= $1.dts } && out.allSatisfy { $0.dts <= $0.pts })
    }

    @Test func captureTimedPicturesKeepTheirCaptureTimes() {
        var s = PresentationStamper<Int>(reorderDepth: 2)
        var out: [PresentationStamper<Int>.Stamped] = []
        for (i, poc) in Self.pocs.enumerated() {
            out += s.push(i, order: PictureOrder(epoch: 0, count: poc), sourceMicros: Int64(poc) * 33_333, atCapture: true)
        }
        out += s.flush()
        #expect(out.map(\.pts) == Self.pocs.map { Int64($0) * 33_333 })
        #expect(zip(out.dropFirst(), out).allSatisfy { $0.dts >= $1.dts } && out.allSatisfy { $0.dts <= $0.pts }, "\(out.map(\.dts))")
        // Past the first `depth`, every access unit's dts is a picture interval after the one
        // before: no two share one (libavformat's readers warn of each that does).
        #expect(out.map(\.dts) == [0, 0, 0, 33_333, 66_666, 99_999, 133_332], "\(out.map(\.dts))")
    }

    @Test func withoutReorderEachPictureIsItsOwnTimeAtOnce() {
        var s = PresentationStamper<Int>(reorderDepth: 0)
        for i in 0..<5 {
            let out = s.push(i, order: PictureOrder(epoch: 0, count: 2 * i), sourceMicros: Int64(i) * 1000, atCapture: false)
            #expect(out.count == 1 && out[0].pts == Int64(i) * 1000 && out[0].dts == out[0].pts)
        }
    }

    @Test func aNewEpochComesAfterEveryPictureOfTheOldOne() {
        var s = PresentationStamper<Int>(reorderDepth: 1)
        var out: [PresentationStamper<Int>.Stamped] = []
        // P(POC 8) then an IDR (POC 0 of the next sequence): the P is still shown first.
        out += s.push(0, order: PictureOrder(epoch: 0, count: 8), sourceMicros: 0, atCapture: false)
        out += s.push(1, order: PictureOrder(epoch: 1, count: 0), sourceMicros: 10_000, atCapture: false)
        out += s.flush()
        #expect(out.count == 2 && out[0].pts < out[1].pts)
    }
}
