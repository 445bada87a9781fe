import SpyglassFeed
/// The grid of a wall: `columns` x `rows` tiles of equal size, filled row by row.
public struct WallLayout: Equatable, Sendable, CustomStringConvertible {
    /// Tiles across.
    public let columns: Int
    /// Tiles down.
    public let rows: Int
    /// The largest grid side accepted (`--layout`).
    public static let maxSide = 8

    /// A grid of `columns` x `rows`; nil when either is outside 1…``maxSide``.
    public init?(columns: Int, rows: Int) {
        guard (1...Self.maxSide).contains(columns), (1...Self.maxSide).contains(rows) else { return nil }
        self.columns = columns
        self.rows = rows
    }

    /// The grid for `feeds` feeds: 1, 2x1, 2x2, 3x3, 4x4, then the smallest square that holds them.
    public static func automatic(feeds: Int) -> WallLayout {
        switch feeds {
        case ...1: return WallLayout(columns: 1, rows: 1)!
        case 2: return WallLayout(columns: 2, rows: 1)!
        default:
            var side = 2
            while side * side < feeds { side += 1 }
            let capped = min(side, maxSide)
            return WallLayout(columns: capped, rows: capped)!
        }
    }

    /// Parses "CxR" (`--layout 3x2`); nil when it is not two whole numbers in 1…``maxSide``.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let c = Int(parts[0]), let r = Int(parts[1]) else { return nil }
        self.init(columns: c, rows: r)
    }

    /// How many tiles the grid has.
    public var capacity: Int { columns * rows }

    /// "CxR".
    public var description: String { "\(columns)x\(rows)" }

    /// Tile `index` (from 0, row by row) of a window `width` x `height` pixels. Tiles share the
    /// window exactly: the last column and row take the pixels that do not divide evenly.
    public func tile(_ index: Int, width: Int, height: Int) -> PixelRect {
        let c = index % columns, r = index / columns
        let x0 = c * width / columns, x1 = (c + 1) * width / columns
        let y0 = r * height / rows, y1 = (r + 1) * height / rows
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The index of the tile under the point (`x`, `y`) of a window `width` x `height`; nil outside it.
    public func tileIndex(atX x: Int, y: Int, width: Int, height: Int) -> Int? {
        guard x >= 0, y >= 0, x < width, y < height, width > 0, height > 0 else { return nil }
        // The first column (row) whose far edge, as ``tile(_:width:height:)`` rounds it, is past the point.
        let c = (0..<columns).first { ($0 + 1) * width / columns > x } ?? columns - 1
        let r = (0..<rows).first { ($0 + 1) * height / rows > y } ?? rows - 1
        return r * columns + c
    }
}
