import Testing
@testable import SpyglassFeed
@testable import SpyglassSession

/// The pattern `spyglass send pattern` encodes: its background is the moving ramp it documents,
/// sample for sample, whatever the frame and the plane strides (the rows are copied from
/// precomputed ramps, and this holds them to the formula).
@Suite struct TestPatternTests {
    @Test(arguments: [0, 1, 37, 301])
    func theBackgroundIsTheDocumentedRampInEveryPlane(index: Int) {
        let width = 176, height = 144, yStride = 192, cStride = 96
        var y = [UInt8](repeating: 0, count: yStride * height)
        var u = [UInt8](repeating: 0, count: cStride * height / 2)
        var v = [UInt8](repeating: 0, count: cStride * height / 2)
        let pattern = TestPattern(width: width, height: height)
        y.withUnsafeMutableBufferPointer { yp in
            u.withUnsafeMutableBufferPointer { up in
                v.withUnsafeMutableBufferPointer { vp in
                    pattern.draw(index: index, captureMicros: 1_796_446_045_457_455,
                                 y: yp.baseAddress!, yStride: yStride, u: up.baseAddress!, uStride: cStride,
                                 v: vp.baseAddress!, vStride: cStride)
                }
            }
        }
        let shift = index * 4
        let strip = TimeCode.stripHeight(width: width)
        // Rows between the codes' strips and clear of the bouncing box; columns right of the frame number.
        let box = max(8, height / 8)
        let travelY = max(1, height - 2 * (strip + 8) - box)
        let by = strip + 8 + Self.bounce(index * 5, travelY)
        var lumaChecked = 0
        for row in (strip + 4)..<(height - strip - 4) where row < by || row >= by + box {
            for col in (width / 2)..<width {
                #expect(y[row * yStride + col] == UInt8(truncatingIfNeeded: 40 + ((col + row + shift) & 0x7F)))
                lumaChecked += 1
            }
        }
        #expect(lumaChecked > 1000)
        for row in ((strip + 5) / 2)..<((height - strip - 5) / 2) {
            for col in 0..<(width / 2) {
                #expect(u[row * cStride + col] == UInt8(truncatingIfNeeded: 128 + ((col - shift / 2) & 0x3F) - 32))
                #expect(v[row * cStride + col] == UInt8(truncatingIfNeeded: 128 + ((row + shift / 3) & 0x3F) - 32))
            }
        }
    }

    /// The box's path, as TestPattern draws it (a triangle wave over `range`).
    static func bounce(_ t: Int, _ range: Int) -> Int {
        let p = t % (2 * range)
        return p < range ? p : 2 * range - p
    }
}
