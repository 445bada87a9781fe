import SpyglassFeed
/// Drawing one tile: the picture placed by the gravity (dimmed when it is frozen or finished), or
/// a slate background with what has arrived before the first picture; at the bottom left the
/// feed's name over its state badge (a coloured disc and words) and the overlay above them; at
/// the top right the REC and DAMAGED tags; a replay's progress bar along the bottom. Never a
/// black tile.
///
/// A window of one tile (a single feed) keeps its picture clean while it is live: no name (the
/// title has it), no badge while pictures arrive or for a file that plays at its own pace, black
/// letterbox bars as other players draw them. Every line sits above the picture's bottom rows,
/// which may carry a time code an observer reads.
extension WallWindow {
    static let background: (r: UInt8, g: UInt8, b: UInt8) = (32, 36, 44)
    private static let box: (r: UInt8, g: UInt8, b: UInt8) = (16, 16, 20)

    /// Where a tile's lines go: the text size, a line's height, and the lowest row free for text.
    struct TileText {
        let pixels: Int32
        let lineHeight: Int
        var bottom: Int
    }

    /// Draws `tile` in `rect`.
    /// - Returns: true when its picture was drawn from the copy shrunk on the feed's thread.
    @discardableResult
    func draw(_ tile: WallTile, in rect: PixelRect) -> Bool {
        var fromCopy = false
        surface.clip(to: rect)
        defer { surface.clip(to: nil); tile.dirty = false }
        let showBadge = !single || (tile.feed.live && tile.badge != .live) || tile.feed.failure != nil
        let pixels = WallSurface.fontPixels(forTileHeight: rect.height)
        var text = TileText(pixels: pixels, lineHeight: Int(pixels) + 8, bottom: rect.y + rect.height - 6)
        var pictureRect: PixelRect?
        if let frame = tile.picture {
            let drawn = drawPicture(frame, of: tile, in: rect)
            fromCopy = drawn.fromCopy
            pictureRect = drawn.rect
            if showBadge && tile.badge.dimsPicture { surface.dim(rect) }
        } else {
            surface.fill(rect, Self.background)
            drawWaiting(tile.waitingLines, in: rect, text: text)
        }
        if let progress = tile.progress { drawProgress(progress, in: rect); text.bottom -= 34 }
        if showBadge { drawBadge(of: tile, in: rect, text: &text) }
        if !single { text.bottom = drawLine(tile.feed.name, in: rect, text: text) }
        if let p = pictureRect {
            // Above the picture's bottom rows: they may carry a time code an observer reads.
            text.bottom = min(text.bottom, p.y + p.height - TimeCode.stripHeight(width: p.width) - 6)
            drawTags(damaged: tile.picture?.damaged == true, recording: tile.feed.recording, in: p)
        }
        // The i/s overlay rises from the bottom left: the OSD keeps its right column, compass
        // and horizon then, not a left column the overlay would be drawn over.
        if view.osd, let osd = tile.osd { drawOSD(osd, in: rect, text: text, leftColumn: view.overlayMode == .none) }
        drawOverlay(tile, in: rect, text: text)
        return fromCopy
    }

    /// The picture placed by the gravity, bars (or, when it cannot be converted, the whole tile) in
    /// the background: slate on a wall, black in a single feed's window.
    /// - Returns: where the picture went, and whether it was drawn from the copy shrunk on the feed's thread.
    private func drawPicture(_ frame: DecodedFrame, of tile: WallTile, in rect: PixelRect) -> (rect: PixelRect, fromCopy: Bool) {
        let (sn, sd) = frame.sampleAspectRatio
        let aspect = Double(frame.width * sn) / Double(max(1, frame.height * sd))
        let p = view.gravity.placement(width: frame.width, height: frame.height, aspect: aspect, in: rect)
        let bars = single ? (0, 0, 0) : Self.background
        if p.destination != rect { surface.fill(rect, bars) }
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
        return (p.destination, fromCopy)
    }

    /// Before the first picture: what has arrived, in the tile's middle (tiles high enough for it).
    private func drawWaiting(_ lines: [String], in rect: PixelRect, text: TileText) {
        guard rect.height >= 150 else { return }
        var y = rect.y + rect.height / 2 - lines.count * (text.lineHeight + 4) / 2
        for line in lines {
            surface.text(line, x: rect.x + 24, y: y, maxWidth: rect.width - 30, pixels: text.pixels)
            y += text.lineHeight + 4
        }
    }

    /// One line with its bottom at `text.bottom`; returns the new bottom above it.
    private func drawLine(_ line: String, in rect: PixelRect, text: TileText) -> Int {
        let y = text.bottom - text.lineHeight
        surface.text(line, x: rect.x + 6, y: y, maxWidth: rect.width - 12, pixels: text.pixels)
        return y - 2
    }

    /// The state badge (a disc in its colour and its words) and, beside a live one, the latency
    /// chip: glass-to-glass with a square in the target's colour (green, amber or red).
    private func drawBadge(of tile: WallTile, in rect: PixelRect, text: inout TileText) {
        let y = text.bottom - text.lineHeight
        let box = surface.text(tile.badge.text, x: rect.x + 26, y: y, maxWidth: rect.width - 32, pixels: text.pixels)
        let h = max(box.height, text.lineHeight)
        surface.fill(PixelRect(x: rect.x + 6, y: y, width: 20, height: h), Self.box)
        surface.disc(cx: rect.x + 16, cy: y + h / 2, radius: 6, tile.badge.colour)
        if let chip = tile.chip {
            let x = box.x + box.width + 6
            surface.fill(PixelRect(x: x, y: y, width: 20, height: h), Self.box)
            surface.fill(PixelRect(x: x + 5, y: y + h / 2 - 5, width: 11, height: 11), chip.colour)
            surface.text(chip.text, x: x + 20, y: y, maxWidth: rect.x + rect.width - x - 26, pixels: text.pixels)
        }
        text.bottom = y - 2
    }

    /// A tile under 360 pixels high or 480 wide gets the overlays' compact forms.
    static func compact(_ rect: PixelRect) -> Bool { rect.height < 360 || rect.width < 480 }

    /// The overlay's lines (``WallTile/overlayLines(_:compact:)``, compact in a small tile) stacked upwards from `text.bottom` in their tones, and with the `i` overlay a
    /// sparkline of glass-to-glass p99 over the last 10 s above them (bars coloured against the
    /// target, a gap for a second without one).
    private func drawOverlay(_ tile: WallTile, in rect: PixelRect, text: TileText) {
        let lines = tile.overlayLines(view.overlayMode, compact: Self.compact(rect))
        var y = text.bottom - lines.count * (text.lineHeight + 2)
        let top = y
        for line in lines {
            surface.text(line.text, x: rect.x + 6, y: y, maxWidth: rect.width - 12, colour: line.tone.rgb, pixels: text.pixels)
            y += text.lineHeight + 2
        }
        guard view.overlayMode == .lastSecond else { return }
        drawSparkline(tile.history, target: tile.feed.targetMillis ?? 100, x: rect.x + 6, bottom: top - 2)
    }

    private func drawSparkline(_ history: GlassToGlassHistory, target: Double, x: Int, bottom: Int) {
        guard history.values.contains(where: { $0 != nil }) else { return }
        let top = bottom - 28, scale = history.scaleTop(targetMillis: target)
        surface.fill(PixelRect(x: x, y: top, width: history.capacity * 6 + 6, height: 28), Self.box)
        for (i, value) in history.values.enumerated() {
            guard let ms = value else { continue }
            let h = max(1, Int(24 * ms / scale))
            surface.fill(PixelRect(x: x + 3 + i * 6, y: top + 26 - h, width: 5, height: h), OverlayLine.Tone.of(millis: ms, target: target).rgb)
        }
    }

    /// REC (a red disc) while the feed is recorded and a red DAMAGED on a picture built on lost
    /// or concealed data: 30-pixel boxes at the picture's top right, below its time-code rows.
    private func drawTags(damaged: Bool, recording: Bool, in picture: PixelRect) {
        var y = picture.y + TimeCode.stripHeight(width: picture.width) + 6
        let right = picture.x + picture.width - 8
        for (on, word) in [(recording, "REC"), (damaged, "DAMAGED")] where on {
            let w = surface.textWidth(word) + (word == "REC" ? 30 : 14)
            surface.fill(PixelRect(x: right - w, y: y, width: w, height: 30), Self.box)
            if word == "REC" { surface.disc(cx: right - w + 14, cy: y + 15, radius: 6, (230, 40, 40)) }
            surface.text(word, x: right - w + (word == "REC" ? 20 : 3), y: y + 4, maxWidth: w, colour: OverlayLine.Tone.bad.rgb)
            y += 36
        }
    }

    /// A replay's bar along the tile's bottom: how far along, a play or pause sign drawn as
    /// shapes (not glyphs a font may lack), and the position line.
    private func drawProgress(_ progress: (fraction: Double, text: String, paused: Bool), in rect: PixelRect) {
        let y = rect.y + rect.height - 30
        surface.fill(PixelRect(x: rect.x, y: y, width: rect.width, height: 30), Self.box)
        surface.fill(PixelRect(x: rect.x, y: y + 26, width: Int(Double(rect.width) * progress.fraction), height: 4), (80, 160, 255))
        let sign: (r: UInt8, g: UInt8, b: UInt8) = (235, 235, 235)
        if progress.paused {
            for bx in [rect.x + 12, rect.x + 20] { surface.fill(PixelRect(x: bx, y: y + 5, width: 4, height: 16), sign) }
        } else {
            for dy in 0..<16 { surface.fill(PixelRect(x: rect.x + 11, y: y + 5 + dy, width: max(1, 14 - abs(dy - 8) * 14 / 8), height: 1), sign) }
        }
        surface.text(progress.text, x: rect.x + 34, y: y + 2, maxWidth: rect.width - 40)
    }
}
