import Foundation
import SpyglassFeed
/// Drawing the aircraft's OSD (``OSD``) over a tile, below the picture's top time-code rows:
/// in a tile at least 360 pixels high, mode and armed state with altitude, speed and climb down
/// the left, battery, GPS, link, home and flight time down the right, a compass strip at the top,
/// an artificial horizon in the middle and the latest STATUSTEXT under it; in a smaller wall tile
/// its compact form (mode, altitude, battery, link). Text on dark boxes, legible over any picture.
extension WallWindow {
    private static let horizonColour: (r: UInt8, g: UInt8, b: UInt8) = (235, 235, 235)
    private static let aircraftColour: (r: UInt8, g: UInt8, b: UInt8) = (255, 190, 60)
    private static let staleColour = OverlayLine.Tone.stale.rgb

    /// Draws `osd` in `rect` with text of `text.pixels`; `leftColumn` false leaves the left
    /// column and the STATUSTEXT to an overlay drawn there.
    func drawOSD(_ osd: OSD, in rect: PixelRect, text: TileText, leftColumn: Bool = true) {
        let top = rect.y + TimeCode.stripHeight(width: rect.width) + 6
        if Self.compact(rect) {
            guard leftColumn else { return }
            column(osd.compactLines, x: rect.x + 6, y: top, rightAlignedTo: nil, in: rect, text: text)
            return
        }
        let compassHeight = text.lineHeight
        let live = osd.stale == nil
        if let h = osd.heading { drawCompass(heading: h, centreX: rect.x + rect.width / 2, y: top, width: min(rect.width / 2, 480), text: text, live: live) }
        let below = top + compassHeight + 8
        if leftColumn {
            column([osd.mode, osd.stale, osd.altitude, osd.speed, osd.climb].compactMap { $0 }, x: rect.x + 6, y: below, rightAlignedTo: nil, in: rect, text: text)
        } else if let stale = osd.stale {
            column([stale], x: 0, y: below, rightAlignedTo: rect.x + rect.width - 6, in: rect, text: text)
        }
        column([osd.battery, osd.gps, osd.link, osd.home, osd.flightTime].compactMap { $0 }, x: 0, y: below,
               rightAlignedTo: rect.x + rect.width - 6, in: rect, text: text)
        let centre = (x: rect.x + rect.width / 2, y: rect.y + rect.height / 2)
        let radius = min(rect.width, rect.height) / 5
        if let roll = osd.roll, let pitch = osd.pitch { drawHorizon(roll: roll, pitch: pitch, centre: centre, radius: radius, live: live) }
        drawAircraft(centre: centre, radius: radius, live: live)
        if leftColumn, let s = osd.statusText {
            let w = min(surface.textWidth(s.text, pixels: text.pixels) + 8, rect.width - 12)
            surface.text(s.text, x: centre.x - w / 2, y: centre.y + radius + 12, maxWidth: w, colour: s.tone.rgb, pixels: text.pixels)
        }
    }

    /// Lines down from `y`, from `x`, or right-aligned to `rightAlignedTo`.
    private func column(_ lines: [OverlayLine], x: Int, y: Int, rightAlignedTo right: Int?, in rect: PixelRect, text: TileText) {
        var y = y
        for line in lines {
            let w = min(surface.textWidth(line.text, pixels: text.pixels) + 8, rect.width / 2 - 12)
            surface.text(line.text, x: right.map { $0 - w } ?? x, y: y, maxWidth: w, colour: line.tone.rgb, pixels: text.pixels)
            y += text.lineHeight + 2
        }
    }

    /// A strip of the headings within 60° either side: a tick every 10°, N/E/S/W and every 30°
    /// labelled, the heading itself marked in the middle and written under it.
    private func drawCompass(heading: Int, centreX: Int, y: Int, width: Int, text: TileText, live: Bool) {
        let h = text.lineHeight, left = centreX - width / 2
        surface.fill(PixelRect(x: left, y: y, width: width, height: h), (16, 16, 20))
        let perDegree = Double(width) / 120
        for offset in -60...60 where (heading + offset + 360) % 10 == 0 {
            let deg = (heading + offset + 360) % 360, x = centreX + Int(Double(offset) * perDegree)
            surface.fill(PixelRect(x: x, y: y + h - 6, width: 2, height: 6), live ? Self.horizonColour : Self.staleColour)
            guard deg % 30 == 0, abs(offset) < 55 else { continue }
            let label = ["N", "E", "S", "W"][safe: deg / 90, when: deg % 90 == 0] ?? "\(deg)"
            let w = surface.textWidth(label, pixels: text.pixels - 4)
            guard abs(offset) > 3 else { continue }   // the lubber line's place
            surface.text(label, x: x - w / 2 - 4, y: y, maxWidth: w + 8, colour: live ? Self.horizonColour : Self.staleColour, pixels: text.pixels - 4)
        }
        let marker = live ? Self.aircraftColour : Self.staleColour
        surface.fill(PixelRect(x: centreX - 1, y: y, width: 3, height: h), marker)
        let number = String(format: "%03d°", heading)
        let w = surface.textWidth(number, pixels: text.pixels)
        surface.text(number, x: centreX - w / 2 - 4, y: y + h + 2, maxWidth: w + 8, colour: marker, pixels: text.pixels)
    }

    /// The horizon line, turned by the roll and moved by the pitch (`radius` pixels for 30°):
    /// a dark outline first, then the light line over it, so it shows on any picture.
    private func drawHorizon(roll: Int, pitch: Int, centre: (x: Int, y: Int), radius: Int, live: Bool) {
        let r = Double(roll) * .pi / 180
        let shift = Double(pitch) * Double(radius) / 30
        let (dx, dy) = (cos(r), -sin(r))
        let (cx, cy) = (Double(centre.x) - dy * shift, Double(centre.y) + dx * shift)
        let points = stride(from: -Double(radius) * 1.6, through: Double(radius) * 1.6, by: 1)
            .filter { abs($0) > Double(radius) * 0.25 }.map { (Int(cx + dx * $0), Int(cy + dy * $0)) }
        for (x, y) in points { surface.fill(PixelRect(x: x - 2, y: y - 2, width: 5, height: 5), (16, 16, 20)) }
        for (x, y) in points { surface.fill(PixelRect(x: x - 1, y: y - 1, width: 3, height: 3), live ? Self.horizonColour : Self.staleColour) }
    }

    /// The fixed aircraft symbol: wings either side of the centre and a dot.
    private func drawAircraft(centre: (x: Int, y: Int), radius: Int, live: Bool) {
        let colour = live ? Self.aircraftColour : Self.staleColour
        let wing = max(12, radius / 2), gap = max(6, radius / 6)
        for side in [-1, 1] {
            let x = side < 0 ? centre.x - gap - wing : centre.x + gap
            surface.fill(PixelRect(x: x - 1, y: centre.y - 2, width: wing + 2, height: 5), (16, 16, 20))
            surface.fill(PixelRect(x: x, y: centre.y - 1, width: wing, height: 3), colour)
        }
        surface.disc(cx: centre.x, cy: centre.y, radius: 3, colour)
    }
}

private extension Array {
    /// The element at `i` when `condition` holds and `i` is in range; nil otherwise.
    subscript(safe i: Int, when condition: Bool) -> Element? { condition && indices.contains(i) ? self[i] : nil }
}
