/// How a picture fills its tile (`--gravity`, the `a` key): the seeds' videoGravity modes.
public enum Gravity: String, CaseIterable, Sendable {
    /// The whole picture, as large as fits, centred; bars fill the rest.
    case letterbox
    /// The tile covered, the picture cropped evenly on the sides that overflow.
    case fill
    /// The whole picture scaled to the tile, aspect ignored.
    case stretch

    /// The mode the `a` key switches to next.
    public var next: Gravity {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }

    /// Where a picture goes in a tile.
    public struct Placement: Equatable, Sendable {
        /// The part of the picture shown, in picture pixels (the whole picture unless ``fill``).
        public var source: PixelRect
        /// Where it is drawn, window pixels (inside the tile).
        public var destination: PixelRect
    }

    /// Places a picture of `width` x `height` pixels whose display aspect (width / height, sample
    /// aspect included) is `aspect` in `tile`.
    /// - Returns: the picture part and the window rectangle; a fill crop starts on even pixels
    ///   (4:2:0 chroma) and is never empty.
    public func placement(width: Int, height: Int, aspect: Double, in tile: PixelRect) -> Placement {
        let whole = PixelRect(x: 0, y: 0, width: width, height: height)
        guard width > 0, height > 0, aspect > 0, tile.width > 0, tile.height > 0 else {
            return Placement(source: whole, destination: tile)
        }
        let tileAspect = Double(tile.width) / Double(tile.height)
        switch self {
        case .stretch:
            return Placement(source: whole, destination: tile)
        case .letterbox:
            var w = tile.width, h = Int((Double(w) / aspect).rounded())
            if h > tile.height { h = tile.height; w = Int((Double(h) * aspect).rounded()) }
            return Placement(source: whole, destination: PixelRect(x: tile.x + (tile.width - w) / 2,
                                                                   y: tile.y + (tile.height - h) / 2, width: w, height: h))
        case .fill:
            var crop = whole
            if tileAspect > aspect {
                crop.height = max(2, Int((Double(height) * aspect / tileAspect).rounded()))
                crop.y = (height - crop.height) / 2 & ~1
            } else {
                crop.width = max(2, Int((Double(width) * tileAspect / aspect).rounded()))
                crop.x = (width - crop.width) / 2 & ~1
            }
            return Placement(source: crop, destination: tile)
        }
    }
}
