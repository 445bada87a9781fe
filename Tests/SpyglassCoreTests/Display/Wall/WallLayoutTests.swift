import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// The wall's pure parts: the grid, the gravity placements, the badge, focus and keys.
@Suite struct WallLayoutTests {
    @Test("the grid follows the count: 1, 2x1, 2x2, 3x3, 4x4")
    func gridFromTheCount() {
        let grids = [1, 2, 3, 4, 5, 9, 10, 16].map { WallLayout.automatic(feeds: $0).description }
        #expect(grids == ["1x1", "2x1", "2x2", "2x2", "3x3", "3x3", "4x4", "4x4"])
    }

    @Test("--layout CxR parses; nonsense and out of range do not")
    func layoutParsing() {
        #expect(WallLayout(parsing: "3x2") == WallLayout(columns: 3, rows: 2))
        for bad in ["3", "0x2", "9x1", "ax2", "3x", "-1x2", "3x2x1"] { #expect(WallLayout(parsing: bad) == nil, "\(bad)") }
    }

    @Test("tiles share the window exactly; a point finds its tile")
    func tilesCoverTheWindow() {
        let l = WallLayout(columns: 3, rows: 3)!
        let tiles = (0..<9).map { l.tile($0, width: 1001, height: 500) }
        #expect(tiles.reduce(0) { $0 + $1.width * $1.height } == 1001 * 500)
        #expect(tiles[8] == PixelRect(x: 667, y: 333, width: 334, height: 167))
        for (i, t) in tiles.enumerated() { #expect(l.tileIndex(atX: t.x, y: t.y + t.height - 1, width: 1001, height: 500) == i) }
        #expect(l.tileIndex(atX: 1001, y: 0, width: 1001, height: 500) == nil)
    }

    @Test("gravity: letterbox fits and centres, fill crops evenly to cover, stretch covers")
    func gravityPlacements() {
        let tile = PixelRect(x: 400, y: 0, width: 400, height: 180)
        let letterbox = Gravity.letterbox.placement(width: 320, height: 180, aspect: 16.0 / 9, in: tile)
        #expect(letterbox.destination == PixelRect(x: 440, y: 0, width: 320, height: 180))
        #expect(letterbox.source == PixelRect(x: 0, y: 0, width: 320, height: 180))
        let fill = Gravity.fill.placement(width: 320, height: 180, aspect: 16.0 / 9, in: tile)
        #expect(fill.destination == tile)
        #expect(fill.source == PixelRect(x: 0, y: 18, width: 320, height: 144))
        let tall = Gravity.fill.placement(width: 320, height: 180, aspect: 16.0 / 9, in: PixelRect(x: 0, y: 0, width: 180, height: 180))
        #expect(tall.source == PixelRect(x: 70, y: 0, width: 180, height: 180))
        #expect(Gravity.stretch.placement(width: 320, height: 180, aspect: 16.0 / 9, in: tile).destination == tile)
        #expect(Gravity.letterbox.next == .fill && Gravity.fill.next == .stretch && Gravity.stretch.next == .letterbox)
    }

    @Test("the badge follows the state and the picture's age; a file is never stalled")
    func badges() {
        let s: UInt64 = 500_000
        #expect(TileBadge.of(state: .waitingForData, lastPictureMicros: nil, nowMicros: 9_000_000, stallMicros: s, live: true) == .waitingForData)
        #expect(TileBadge.of(state: .waitingForData, lastPictureMicros: nil, nowMicros: 9_000_000, stallMicros: s, live: true, refused: 1698).text
                == "refusing 1698 datagrams from senders --allow-from does not allow", "never 'waiting for data' while data arrives")
        #expect(TileBadge.of(state: .waitingForPicture, lastPictureMicros: nil, nowMicros: 9_000_000, stallMicros: s, live: true) == .waitingForPicture)
        #expect(TileBadge.of(state: .live, lastPictureMicros: 8_800_000, nowMicros: 9_000_000, stallMicros: s, live: true) == .live)
        #expect(TileBadge.of(state: .live, lastPictureMicros: 6_600_000, nowMicros: 9_000_000, stallMicros: s, live: true) == .stalled(ageSeconds: 2.4))
        #expect(TileBadge.of(state: .live, lastPictureMicros: 6_600_000, nowMicros: 9_000_000, stallMicros: s, live: false) == .playing)
        #expect(TileBadge.of(state: .reconnecting, lastPictureMicros: 1, nowMicros: 9_000_000, stallMicros: s, live: true) == .reconnecting)
        #expect(TileBadge.of(state: .ended, lastPictureMicros: 1, nowMicros: 9_000_000, stallMicros: s, live: true) == .ended)
        #expect(TileBadge.of(state: .failed("port in use"), lastPictureMicros: nil, nowMicros: 9, stallMicros: s, live: true).text == "failed: port in use")
        #expect(TileBadge.stalled(ageSeconds: 2.4).text == "stalled 2.4 s" && TileBadge.stalled(ageSeconds: 2.4).word == "stalled")
        #expect(TileBadge.stalled(ageSeconds: 1).dimsPicture && !TileBadge.live.dimsPicture)
    }

    @Test("keys and clicks: digit focuses and the same digit returns, Esc returns then quits, Tab cycles, a cycles gravity")
    func focusKeys() {
        var v = WallView(feeds: 3, layout: WallLayout.automatic(feeds: 3), gravity: .letterbox)
        #expect(v.apply(.key(.feed(1)), width: 640, height: 360) == .redrawAll && v.focus == 1)
        #expect(v.visibleTiles(width: 640, height: 360).map(\.feed) == [1])
        #expect(v.apply(.key(.feed(1)), width: 640, height: 360) == .redrawAll && v.focus == nil)
        #expect(v.apply(.key(.feed(5)), width: 640, height: 360) == .none && v.focus == nil)
        #expect(v.apply(.click(x: 10, y: 300), width: 640, height: 360) == .redrawAll && v.focus == 2)
        #expect(v.apply(.key(.nextFeed), width: 640, height: 360) == .redrawAll && v.focus == 0)
        #expect(v.apply(.key(.escape), width: 640, height: 360) == .redrawAll && v.focus == nil)
        #expect(v.apply(.click(x: 500, y: 300), width: 640, height: 360) == .none, "the empty fourth tile")
        #expect(v.apply(.key(.gravity), width: 640, height: 360) == .redrawAll && v.gravity == .fill)
        #expect(v.apply(.key(.screenshot), width: 640, height: 360) == .screenshot)
        #expect(v.apply(.key(.escape), width: 640, height: 360) == .quit)
    }

    @Test("the glass-to-glass chip: the worst of the last second, green within the target, amber to 1.5x, red beyond")
    func latencyChip() {
        #expect(LatencyChip(millis: 84, targetMillis: 120).text == "84 / 120 ms")
        #expect(LatencyChip(millis: 84.4, targetMillis: nil).text == "84 ms")
        #expect(LatencyChip(millis: 84, targetMillis: 120, lowerBound: true).text == "≥84 / 120 ms", "an RTCP figure is a lower bound")
        #expect(LatencyChip(millis: 120, targetMillis: 120).colour == (40, 200, 80))
        #expect(LatencyChip(millis: 170, targetMillis: 120).colour == (240, 170, 20))
        #expect(LatencyChip(millis: 181, targetMillis: 120).colour == (230, 40, 40))
        #expect(LatencyChip(millis: 181, targetMillis: nil).colour == (150, 150, 150))
        var recent = RecentGlassToGlass()
        recent.add(presentedMicros: 1_000_000, millis: 90)
        recent.add(presentedMicros: 1_500_000, millis: 40)
        #expect(recent.worst(nowMicros: 1_900_000) == 90)
        #expect(recent.worst(nowMicros: 2_100_000) == 40, "the 90 ms picture is over a second old")
        #expect(recent.worst(nowMicros: 2_600_000) == nil)
    }

    @Test("a grid smaller than the feeds: the extra feeds are reached by Tab and digits, not drawn on the wall")
    func moreFeedsThanTiles() {
        var v = WallView(feeds: 5, layout: WallLayout(columns: 2, rows: 2)!, gravity: .letterbox)
        #expect(v.visibleTiles(width: 640, height: 360).map(\.feed) == [0, 1, 2, 3])
        #expect(v.apply(.key(.feed(4)), width: 640, height: 360) == .redrawAll)
        #expect(v.visibleTiles(width: 640, height: 360).map(\.feed) == [4])
        #expect(v.apply(.key(.nextFeed), width: 640, height: 360) == .redrawAll && v.focus == 0, "Tab wraps")
    }

    @Test("the last second from two snapshots: rates, losses and stage percentiles of that second only")
    func feedSecond() {
        var a = MetricsRegistry.Snapshot(), b = MetricsRegistry.Snapshot()
        a.counters = [.framesShown: 100, .framesDecoded: 100, .accessUnits: 100, .bytes: 1_000_000, .packetsLost: 2]
        b.counters = [.framesShown: 130, .framesDecoded: 131, .accessUnits: 131, .bytes: 1_500_000, .packetsLost: 5, .resets: 1]
        var early = Histogram(), late = Histogram()
        for _ in 0..<100 { early.record(50_000) }   // an old 50 ms second
        late = early
        for _ in 0..<30 { late.record(2_000) }      // this second: 2 ms
        a.stages = [.decode: early]
        b.stages = [.decode: late]
        let s = FeedRates(from: a, to: b, seconds: 1)
        #expect(s.shownPerSecond == 30 && s.decodedPerSecond == 31 && s.bitsPerSecond == 4_000_000 && s.lost == 3)
        let p50 = try! #require(s.millis(.decode, quantile: 0.5)), p99 = try! #require(s.millis(.decode, quantile: 0.99))
        #expect(abs(p50 - 2) < 0.1 && abs(p99 - 2) < 0.1, "only this second's samples: \(p50) \(p99)")
        b.format = "H.264 640x360"
        let lines = FeedOverlay.lines(FeedOverlay.Inputs(snapshot: b, rates: s, frameAgeMillis: 20, targetMillis: 120), compact: false).map(\.text)
        #expect(lines[0] == "H.264 640x360 · resets 1")
        #expect(lines[1] == "31.0 fps in · 31.0 decoded · 30.0 shown · 4.0 Mb/s")
        #expect(lines.contains { $0.contains("decode 2.0/2.0") }, "\(lines)")
        #expect(lines.last == "loss 3 · damaged 0 (last second)")
    }
}
