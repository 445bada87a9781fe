import SpyglassFeed
/// Draws the live test pattern into a yuv420p picture: a moving gradient and a bouncing box
/// (motion to encode), the frame number in large digits, and the capture instant as a
/// ``TimeCode`` strip across the top and again across the bottom: an observer that reads both
/// and finds them equal knows the whole picture is the right one, not a half-decoded one.
public struct TestPattern {
    public let width: Int
    public let height: Int

    /// - Parameters: width/height: picture size in luma samples (even).
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        // Every luma row is a window of one 128-periodic ramp, every Cb row a window of a
        // 64-periodic one: drawing copies rows instead of computing samples (0.23 ms a 640x360
        // picture before, measured with perf in tools/peer-latency; it sits between the capture
        // instant and the encoder, so it counted as latency for every player).
        lumaRamp = (0..<(width + 128)).map { UInt8(truncatingIfNeeded: 40 + ($0 & 0x7F)) }
        chromaRamp = (0..<(width / 2 + 64)).map { UInt8(truncatingIfNeeded: 128 + ($0 & 0x3F) - 32) }
    }

    /// 40 + (i mod 128) for i in 0..<width + 128: luma row r of frame k starts at (r + 4k) mod 128.
    private let lumaRamp: [UInt8]
    /// 96 + (i mod 64) for i in 0..<width/2 + 64: every Cb row of frame k starts at (-2k) mod 64.
    private let chromaRamp: [UInt8]

    /// Draws frame `index` captured at `captureMicros` (µs since the epoch) into the planes.
    public func draw(index: Int, captureMicros: UInt64,
                     y: UnsafeMutablePointer<UInt8>, yStride: Int,
                     u: UnsafeMutablePointer<UInt8>, uStride: Int,
                     v: UnsafeMutablePointer<UInt8>, vStride: Int) {
        let strip = TimeCode.stripHeight(width: width)
        let shift = index * 4
        lumaRamp.withUnsafeBufferPointer { ramp in
            for row in 0..<height {
                let line = y + row * yStride
                if row < strip + 4 || row >= height - strip - 4 {
                    line.update(repeating: 16, count: width)
                } else {
                    line.update(from: ramp.baseAddress! + ((row + shift) & 0x7F), count: width)
                }
            }
        }
        chromaRamp.withUnsafeBufferPointer { ramp in
            for row in 0..<(height / 2) {
                (u + row * uStride).update(from: ramp.baseAddress! + ((-(shift / 2)) & 0x3F), count: width / 2)
                (v + row * vStride).update(repeating: UInt8(truncatingIfNeeded: 128 + ((row + shift / 3) & 0x3F) - 32), count: width / 2)
            }
        }
        // A bouncing white box.
        let box = max(8, height / 8)
        let travelX = max(1, width - box), travelY = max(1, height - 2 * (strip + 8) - box)
        let bx = bounce(index * 7, travelX), by = strip + 8 + bounce(index * 5, travelY)
        for row in by..<min(height, by + box) { (y + row * yStride + bx).update(repeating: 235, count: box) }
        // Frame number.
        drawNumber(index, x: width / 20, y: strip + height / 12, scale: max(2, height / 60), plane: y, stride: yStride)
        TimeCode.draw(captureMicros, into: y, stride: yStride, x: 0, y: 0, width: width)
        TimeCode.draw(captureMicros, into: y, stride: yStride, x: 0, y: height - strip, width: width)
        // Neutral chroma under the codes, so colour never leaks into them.
        for row in Array(0..<((strip + 5) / 2)) + Array(((height - strip - 5) / 2)..<(height / 2)) {
            (u + row * uStride).update(repeating: 128, count: width / 2)
            (v + row * vStride).update(repeating: 128, count: width / 2)
        }
    }

    private func bounce(_ t: Int, _ range: Int) -> Int {
        let p = t % (2 * range)
        return p < range ? p : 2 * range - p
    }

    // 3x5 digit glyphs, one row per 3 bits.
    private static let glyphs: [[UInt8]] = [
        [7, 5, 5, 5, 7], [2, 6, 2, 2, 7], [7, 1, 7, 4, 7], [7, 1, 7, 1, 7], [5, 5, 7, 1, 1],
        [7, 4, 7, 1, 7], [7, 4, 7, 5, 7], [7, 1, 1, 1, 1], [7, 5, 7, 5, 7], [7, 5, 7, 1, 7],
    ]

    private func drawNumber(_ n: Int, x: Int, y: Int, scale: Int, plane: UnsafeMutablePointer<UInt8>, stride: Int) {
        let digits = String(n).compactMap { $0.wholeNumberValue }
        for (k, d) in digits.enumerated() {
            let gx = x + k * 4 * scale
            for (r, bits) in Self.glyphs[d].enumerated() {
                for c in 0..<3 where bits & (4 >> UInt8(c)) != 0 {
                    for yy in 0..<scale {
                        let row = y + r * scale + yy
                        let col = gx + c * scale
                        guard row < height, col + scale <= width else { continue }
                        (plane + row * stride + col).update(repeating: 235, count: scale)
                    }
                }
            }
        }
    }
}
