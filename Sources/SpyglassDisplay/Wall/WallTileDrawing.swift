import SpyglassFeed
/// Drawing one tile of the wall: the picture placed by the gravity (dimmed when it is frozen or
/// finished), or a slate background before the first picture; at the bottom left the feed's
/// name over its state badge (a coloured disc and words). Never a black tile.
extension WallWindow {
    static let background: (r: UInt8, g: UInt8, b: UInt8) = (32, 36, 44)

    /// Draws `tile` in `rect`.
    /// - Returns: true when its picture was drawn from the copy shrunk on the feed's thread.
    @discardableResult
    func draw(_ tile: WallTile, in rect: PixelRect) -> Bool {
        var fromCopy = false
        surface.clip(to: rect)
        defer { surface.clip(to: nil); tile.dirty = false }
        if let frame = tile.picture {
            fromCopy = drawPicture(frame, of: tile, in: rect)
            if tile.badge.dimsPicture { surface.dim(rect) }
        } else {
            surface.fill(rect, Self.background)
        }
        // Bottom left, the name over the badge: the top rows may carry a time code an observer reads.
        let inner = rect.width - 12
        let lineHeight = Int(WallSurface.fontPixels) + 8
        let y = rect.y + rect.height - lineHeight - 6
        surface.text(tile.feed.name, x: rect.x + 6, y: y - lineHeight - 2, maxWidth: inner)
        if view.overlay { drawOverlay(tile, in: rect, above: y - lineHeight - 2, lineHeight: lineHeight) }
        let box = surface.text(tile.badge.text, x: rect.x + 26, y: y, maxWidth: inner - 20)
        surface.fill(PixelRect(x: rect.x + 6, y: y, width: 20, height: max(box.height, lineHeight)), (16, 16, 20))
        surface.disc(cx: rect.x + 16, cy: y + max(box.height, lineHeight) / 2, radius: 6, tile.badge.colour)
        if let chip = tile.chip {
            // Glass-to-glass, with a square in the target's colour: green, amber or red.
            let x = box.x + box.width + 6
            surface.fill(PixelRect(x: x, y: y, width: 20, height: max(box.height, lineHeight)), (16, 16, 20))
            surface.fill(PixelRect(x: x + 5, y: y + max(box.height, lineHeight) / 2 - 5, width: 11, height: 11), chip.colour)
            surface.text(chip.text, x: x + 20, y: y, maxWidth: rect.x + rect.width - x - 26)
        }
        return fromCopy
    }

    /// The picture placed by the gravity, bars (or, when it cannot be converted, the whole tile) in
    /// the slate background. - Returns: true when drawn from the copy shrunk on the feed's thread.
    private func drawPicture(_ frame: DecodedFrame, of tile: WallTile, in rect: PixelRect) -> Bool {
        let (sn, sd) = frame.sampleAspectRatio
        let aspect = Double(frame.width * sn) / Double(max(1, frame.height * sd))
        let p = view.gravity.placement(width: frame.width, height: frame.height, aspect: aspect, in: rect)
        if p.destination != rect { surface.fill(rect, Self.background) }
        let drawn: Bool, fromCopy: Bool
        if let copy = frame.tileCopy, copy.source == p.source,
           copy.picture.width == p.destination.width, copy.picture.height == p.destination.height {
            // Shrunk on the feed's thread for exactly this place: only converted here.
            fromCopy = true
            drawn = surface.draw(copy.picture, source: PixelRect(x: 0, y: 0, width: copy.picture.width, height: copy.picture.height),
                                 into: p.destination, converter: tile.converter)
        } else {
            fromCopy = false
            drawn = surface.draw(frame.picture, source: p.source, into: p.destination, converter: tile.converter)
        }
        if !drawn { surface.fill(rect, Self.background) }
        return fromCopy
    }

    /// The `i` overlay (``FeedOverlay``, compact in a tile under 360 pixels high): the last
    /// second's lines stacked above the name in their tones, and a sparkline of glass-to-glass p99
    /// over the last 10 s above them (bars coloured against the target, a gap for a second without one).
    private func drawOverlay(_ tile: WallTile, in rect: PixelRect, above bottom: Int, lineHeight: Int) {
        let lines = tile.overlay(compact: rect.height < 360)
        var y = bottom - lines.count * (lineHeight + 2)
        for line in lines {
            surface.text(line.text, x: rect.x + 6, y: y, maxWidth: rect.width - 12, colour: line.tone.rgb)
            y += lineHeight + 2
        }
        let values = tile.history.values
        guard values.contains(where: { $0 != nil }) else { return }
        let target = tile.feed.targetMillis ?? 100
        let top = bottom - lines.count * (lineHeight + 2) - 30
        let scale = tile.history.scaleTop(targetMillis: target)
        surface.fill(PixelRect(x: rect.x + 6, y: top, width: tile.history.capacity * 6 + 6, height: 28), (16, 16, 20))
        for (i, value) in values.enumerated() {
            guard let ms = value else { continue }
            let h = max(1, Int(24 * ms / scale))
            let tone = OverlayLine.Tone.of(millis: ms, target: target).rgb
            surface.fill(PixelRect(x: rect.x + 9 + i * 6, y: top + 26 - h, width: 5, height: h), tone)
        }
    }
}
