/// A machine-readable time code drawn in the pixels of a picture, robust to compression.
///
/// 88 bits in two rows of 44 square blocks across the picture width: an 8-bit sync word,
/// a 64-bit value (µs since the Unix epoch) and a CRC-16/CCITT over the value. A block is
/// black (luma 16) for 0 and white (luma 235) for 1; a reader samples the middle of each block
/// and thresholds at the midpoint. A code caught half-updated (a screen grab in the middle of
/// a redraw) fails the sync or the CRC and is rejected, never misread.
public enum TimeCode {
    static let sync: UInt8 = 0b1011_0010
    /// Blocks per row.
    public static let blocksPerRow = 44
    /// Rows of blocks.
    public static let rows = 2

    /// Side of one block in pixels for a picture `width` wide.
    public static func blockSize(width: Int) -> Int { max(2, width / blocksPerRow) }

    /// Height of the code strip in pixels for a picture `width` wide.
    public static func stripHeight(width: Int) -> Int { blockSize(width: width) * rows }

    /// The 88 bits for `value`, in drawing order.
    public static func bits(for value: UInt64) -> [Bool] {
        var bits: [Bool] = []
        for i in (0..<8).reversed() { bits.append((sync >> UInt8(i)) & 1 == 1) }
        for i in (0..<64).reversed() { bits.append((value >> UInt64(i)) & 1 == 1) }
        let crc = crc16(value)
        for i in (0..<16).reversed() { bits.append((crc >> UInt16(i)) & 1 == 1) }
        return bits
    }

    /// Decodes 88 bits. Returns nil when the sync word or the CRC does not match.
    public static func value(from bits: [Bool]) -> UInt64? {
        guard bits.count == blocksPerRow * rows else { return nil }
        var s: UInt8 = 0
        for i in 0..<8 { s = (s << 1) | (bits[i] ? 1 : 0) }
        guard s == sync else { return nil }
        var v: UInt64 = 0
        for i in 8..<72 { v = (v << 1) | (bits[i] ? 1 : 0) }
        var c: UInt16 = 0
        for i in 72..<88 { c = (c << 1) | (bits[i] ? 1 : 0) }
        return c == crc16(v) ? v : nil
    }

    /// Draws the code for `value` into an 8-bit plane at (`x`, `y`), `width` pixels wide.
    /// - Parameters:
    ///   - plane: first byte of the plane; `stride` bytes per row.
    ///   - black/white: sample values for 0 and 1 (16/235 for limited-range luma).
    public static func draw(_ value: UInt64, into plane: UnsafeMutablePointer<UInt8>, stride: Int,
                            x: Int, y: Int, width: Int, black: UInt8 = 16, white: UInt8 = 235) {
        let b = blockSize(width: width)
        for (i, bit) in bits(for: value).enumerated() {
            let bx = x + (i % blocksPerRow) * b
            let by = y + (i / blocksPerRow) * b
            let v = bit ? white : black
            for row in by..<(by + b) {
                (plane + row * stride + bx).update(repeating: v, count: b)
            }
        }
    }

    /// Reads a code from an 8-bit plane whose code strip starts at (`x`, `y`) and spans `width`.
    /// - Parameter sample: returns the 0...255 brightness at (column, row).
    /// - Returns: the value, or nil when there is no valid code there.
    public static func read(x: Int, y: Int, width: Int, sample: (Int, Int) -> Int) -> UInt64? {
        let b = blockSize(width: width)
        var bits: [Bool] = []
        bits.reserveCapacity(blocksPerRow * rows)
        for i in 0..<(blocksPerRow * rows) {
            let cx = x + (i % blocksPerRow) * b + b / 2
            let cy = y + (i / blocksPerRow) * b + b / 2
            var sum = 0, n = 0
            let r = max(0, b / 4)
            for dy in -r...r { for dx in -r...r { sum += sample(cx + dx, cy + dy); n += 1 } }
            bits.append(sum / n >= 126)
        }
        return value(from: bits)
    }

    /// CRC-16/CCITT-FALSE of the value's 8 big-endian bytes.
    static func crc16(_ v: UInt64) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for i in (0..<8).reversed() {
            crc ^= UInt16(UInt8(truncatingIfNeeded: v >> UInt64(8 * i))) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}
