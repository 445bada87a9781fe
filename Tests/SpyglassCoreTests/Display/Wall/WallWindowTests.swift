// A real wall window under Xvfb, in this process: four live feeds, each a solid colour encoded
// and sent by its own ffmpeg over UDP on 127.0.0.1, each received by its own Pipeline. The window
// is read back pixel by pixel. Keys go in through the wall's own input path (`apply`), as SDL's
// events would.
import CSDL2
import Foundation
import Synchronization
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
#if canImport(Glibc)
import Glibc
@testable import SpyglassIngest
#endif

@MainActor
@Suite("The wall window", .serialized,
       .enabled(if: VirtualScreen.isPossible, "no X display: DISPLAY is unset and Xvfb is not installed"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "ffmpeg is not installed (tools/setup)"))
struct WallWindowTests {
    /// Far longer than anything here takes; reached only when something is broken.
    static let deadlineSeconds = 60.0
    typealias RGB = (r: Int, g: Int, b: Int)
    static let colours: [(name: String, rgb: RGB)] = [("red", (255, 0, 0)), ("lime", (0, 255, 0)),
                                                      ("blue", (0, 0, 255)), ("yellow", (255, 255, 0))]

    /// Four senders, four pipelines, one wall window of `width` x `height`.
    final class Rig {
        let senders: [Fixtures.Child]
        let pipelines: [Pipeline]
        let wall: WallWindow
        let wake = WakeTarget()

        @MainActor init(system: SDLVideoSystem, width: Int, height: Int) throws {
            var feeds: [WallFeed] = [], senders: [Fixtures.Child] = []
            let wake = self.wake
            for (i, colour) in WallWindowTests.colours.enumerated() {
                let udp = try UDPSource(host: "127.0.0.1", port: 0)
                let port = udp.boundPort
                let metrics = MetricsRegistry()
                let slot = FrameSlot()
                // As `play` builds a wall feed: pictures shrunk for their tile on the feed's thread.
                let prescaler = TilePrescaler()
                let sink = WindowSink(slot: slot, metrics: metrics, latency: nil, prescaler: prescaler, wake: wake)
                let p = Pipeline(id: i + 1, source: udp, options: ReceiverOptions(), metrics: metrics, sink: sink)
                feeds.append(WallFeed(pipeline: p, slot: slot, latency: nil, name: colour.name, live: true, prescaler: prescaler))
                senders.append(try Fixtures.start("/usr/bin/ffmpeg", [
                    "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "color=c=\(colour.name):s=320x180:r=30",
                    "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "15", "-pix_fmt", "yuv420p",
                    "-f", "h264", "udp://127.0.0.1:\(port)?pkt_size=1316"]))
            }
            var settings = WallWindow.Settings()
            settings.size = (width, height)
            settings.position = (0, 0)
            settings.screenshotFolder = FileManager.default.temporaryDirectory.path
            wall = try WallWindow(system: system, feeds: feeds, settings: settings)
            wake.aim(at: wall.waker)
            pipelines = feeds.compactMap(\.pipeline)
            self.senders = senders
            for p in pipelines { p.start() }
        }

        /// Stops the senders and the feeds; the window goes with the rig, on the main actor.
        func stop() {
            for s in senders where s.process.isRunning { s.process.terminate() }
            for s in senders { _ = s.wait(timeoutSeconds: 10) }
            for p in pipelines { p.stop() }
            for p in pipelines { p.join() }
        }

        /// Runs the wall until `condition` holds; false when the deadline passes first.
        @MainActor func step(until condition: () -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: WallWindowTests.deadlineSeconds)
            while Date() < deadline {
                wall.step(waitMillis: 20)
                if condition() { return true }
            }
            return false
        }

        /// The window's colour at (`x`, `y`).
        @MainActor func pixel(_ x: Int, _ y: Int) -> RGB {
            guard let p = wall.rgb(of: PixelRect(x: x, y: y, width: 1, height: 1)) else { return (-1, -1, -1) }
            return (Int(p[0]), Int(p[1]), Int(p[2]))
        }

        /// The centre of feed `i`'s tile shows `colour` (within encoding error).
        @MainActor func centre(of i: Int, shows colour: RGB) -> Bool {
            guard let r = wall.rect(ofFeed: i) else { return false }
            return close(pixel(r.x + r.width / 2, r.y + r.height / 2), colour)
        }
    }

    static func close(_ a: RGB, _ b: RGB, tolerance: Int = 40) -> Bool {
        abs(a.r - b.r) <= tolerance && abs(a.g - b.g) <= tolerance && abs(a.b - b.b) <= tolerance
    }

    /// Opens a virtual screen, the video system and the rig; runs `body`; closes the window and
    /// SDL before the screen goes (Xlib ends the process when its server vanishes under it).
    private func withWall(width: Int = 640, height: Int = 360, _ body: (Rig) throws -> Void) throws {
        let screen = try VirtualScreen()
        defer { screen.stop() }
        try screen.whileDisplaySet {
            let rig = try Rig(system: try SDLVideoSystem(), width: width, height: height)
            defer { rig.stop() }
            try #require(rig.step { (0..<4).allSatisfy { rig.wall.badge(ofFeed: $0) == .live } },
                         "every feed went live: \((0..<4).map { rig.wall.badge(ofFeed: $0) })")
            try body(rig)
        }
    }

    @Test("four feeds: each colour in its own tile of a 2x2 wall, and only there")
    func eachColourInItsOwnTile() throws {
        try withWall { rig in
            #expect(rig.wall.view.layout == WallLayout(columns: 2, rows: 2))
            let shown = rig.step { (0..<4).allSatisfy { rig.centre(of: $0, shows: Self.colours[$0].rgb) } }
            #expect(shown, "tile centres: \((0..<4).map { i in rig.wall.rect(ofFeed: i).map { rig.pixel($0.x + $0.width / 2, $0.y + $0.height / 2) } })")
            #expect(rig.wall.rect(ofFeed: 3) == PixelRect(x: 320, y: 180, width: 320, height: 180))
            #expect(rig.wall.currentTitle == "Spyglass — 4 feeds — 4 live", "title: \(rig.wall.currentTitle)")
            #expect(rig.wall.shrunkDraws == [0, 0, 0, 0], "320x180 pictures in 320x180 tiles are not shrunk first")
        }
    }

    @Test("tiles smaller than the pictures: each picture is shrunk on its feed's thread, drawn from that copy, in its colour")
    func picturesShrunkOnTheFeedThreadAreDrawn() throws {
        try withWall(width: 480, height: 270) { rig in
            let before = rig.wall.shrunkDraws
            let shown = rig.step {
                (0..<4).allSatisfy { rig.wall.shrunkDraws[$0] >= before[$0] + 3 && rig.centre(of: $0, shows: Self.colours[$0].rgb) }
            }
            #expect(shown, "draws from copies \(rig.wall.shrunkDraws) of \(rig.wall.tileDraws); centres \((0..<4).map { i in rig.wall.rect(ofFeed: i).map { rig.pixel($0.x + $0.width / 2, $0.y + $0.height / 2) } })")
            // Focused, the picture is smaller than the window: the wall scales the picture itself.
            rig.wall.apply(.key(.feed(0)))
            let drawsBefore = rig.wall.tileDraws[0], shrunkBefore = rig.wall.shrunkDraws[0]
            #expect(rig.step { rig.wall.tileDraws[0] >= drawsBefore + 3 && rig.centre(of: 0, shows: Self.colours[0].rgb) })
            #expect(rig.wall.shrunkDraws[0] == shrunkBefore, "a copy made for the small tile is never stretched over the window")
        }
    }

    @Test("a killed sender: its tile shows stalled with a growing age, dimmed; the other three keep counting frames")
    func aKilledSenderStallsOnlyItsTile() throws {
        try withWall { rig in
            rig.senders[1].process.terminate()
            _ = rig.senders[1].wait(timeoutSeconds: 10)
            var firstAge = 0.0
            #expect(rig.step { if case .stalled(let a) = rig.wall.badge(ofFeed: 1) { firstAge = a; return true }; return false },
                    "feed 2 shows stalled: \(rig.wall.badge(ofFeed: 1))")
            let shownAtStall = rig.pipelines.map { $0.metrics.count(.framesShown) }
            let drawsAtStall = rig.wall.tileDraws[1]
            // What the tile says: its badge, and the stall's reason over the picture.
            let says = { [rig.wall.badge(ofFeed: 1).text] + rig.wall.shownOverlayLines(ofFeed: 1) }
            var laterAge = 0.0, badgeChanges = 0, lastText = says()
            #expect(rig.step {
                        let text = says()
                        if text != lastText { badgeChanges += 1; lastText = text }
                        if case .stalled(let a) = rig.wall.badge(ofFeed: 1) { laterAge = a }
                        return laterAge >= firstAge + 1
                    }, "the stall's age grew from \(firstAge) s (now \(rig.wall.badge(ofFeed: 1)))")
            // The frozen tile is drawn again only when its badge or words read differently, not per step.
            #expect(rig.wall.tileDraws[1] - drawsAtStall == badgeChanges,
                    "stalled tile drawn \(rig.wall.tileDraws[1] - drawsAtStall) times for \(badgeChanges) changes of its badge or words")
            #expect(rig.wall.shownOverlayLines(ofFeed: 1).first?.hasPrefix("no data from") == true,
                    "the stalled tile says why: \(rig.wall.shownOverlayLines(ofFeed: 1))")
            let others = [0, 2, 3]
            #expect(rig.step { others.allSatisfy { rig.pipelines[$0].metrics.count(.framesShown) >= shownAtStall[$0] + 30 } },
                    "the other feeds kept showing frames: \(shownAtStall) → \(rig.pipelines.map { $0.metrics.count(.framesShown) })")
            #expect(others.allSatisfy { rig.wall.badge(ofFeed: $0) == .live })
            // The frozen lime picture is dimmed to a quarter: still green, no longer bright.
            let r = try #require(rig.wall.rect(ofFeed: 1))
            let c = rig.pixel(r.x + r.width / 2, r.y + r.height / 2)
            #expect(c.g > c.r + 20 && c.g < 110, "dimmed lime: \(c)")
            #expect(rig.wall.currentTitle == "Spyglass — 4 feeds — 3 live, 1 stalled", "title: \(rig.wall.currentTitle)")
        }
    }

    @Test("focus: digit key and click show one feed in the whole window; Esc and the same key go back; Tab cycles")
    func focusAndBack() throws {
        try withWall { rig in
            let whole = PixelRect(x: 0, y: 0, width: 640, height: 360)
            rig.wall.apply(.key(.feed(2)))   // "3": blue
            #expect(rig.wall.view.focus == 2 && rig.wall.rect(ofFeed: 2) == whole && rig.wall.rect(ofFeed: 0) == nil)
            #expect(rig.step { Self.close(rig.pixel(100, 90), Self.colours[2].rgb) && Self.close(rig.pixel(540, 270), Self.colours[2].rgb) },
                    "blue fills the window: \(rig.pixel(100, 90)) \(rig.pixel(540, 270))")
            rig.wall.apply(.key(.feed(2)))   // the same key: back
            #expect(rig.wall.view.focus == nil)
            #expect(rig.step { (0..<4).allSatisfy { rig.centre(of: $0, shows: Self.colours[$0].rgb) } }, "the wall is back")
            rig.wall.apply(.click(x: 500, y: 300))         // the yellow tile
            #expect(rig.wall.view.focus == 3)
            #expect(rig.step { Self.close(rig.pixel(100, 90), Self.colours[3].rgb) }, "yellow fills the window")
            rig.wall.apply(.key(.nextFeed))
            #expect(rig.wall.view.focus == 0)
            #expect(rig.step { Self.close(rig.pixel(540, 270), Self.colours[0].rgb) }, "Tab went on to red")
            rig.wall.apply(.key(.escape))
            #expect(rig.wall.view.focus == nil && !rig.wall.quitRequested)
            #expect(rig.step { (0..<4).allSatisfy { rig.centre(of: $0, shows: Self.colours[$0].rgb) } }, "Esc went back to the wall")
        }
    }

    @Test("gravity: letterbox leaves bars beside a 16:9 picture in a wider tile; fill and stretch cover the tile")
    func gravityExtents() throws {
        // 800x360 in 2x2: tiles of 400x180 for 320x180 pictures; letterboxed, the picture is x 40..<360.
        try withWall(width: 800, height: 360) { rig in
            let tile = try #require(rig.wall.rect(ofFeed: 0))
            #expect(tile == PixelRect(x: 0, y: 0, width: 400, height: 180))
            let y = 90
            let inBar = { rig.pixel(20, y) }, inPicture = { rig.pixel(45, y) }, beyond = { rig.pixel(380, y) }
            let bg: RGB = (Int(WallWindow.background.r), Int(WallWindow.background.g), Int(WallWindow.background.b))
            #expect(rig.wall.view.gravity == .letterbox)
            #expect(rig.step { Self.close(inBar(), bg, tolerance: 2) && Self.close(beyond(), bg, tolerance: 2) && Self.close(inPicture(), Self.colours[0].rgb) },
                    "letterbox: bars \(inBar()) \(beyond()), picture \(inPicture())")
            for mode in [Gravity.fill, .stretch] {
                rig.wall.apply(.key(.gravity))
                #expect(rig.wall.view.gravity == mode)
                #expect(rig.step { Self.close(inBar(), Self.colours[0].rgb) && Self.close(beyond(), Self.colours[0].rgb) },
                        "\(mode): the picture covers the tile: \(inBar()) \(beyond())")
            }
        }
    }

    @Test("p writes a PNG of the window that decodes to the window's pixels")
    func screenshotMatchesTheWindow() throws {
        try withWall { rig in
            #expect(rig.step { (0..<4).allSatisfy { rig.centre(of: $0, shows: Self.colours[$0].rgb) } })
            rig.wall.apply(.key(.screenshot))
            let job = try #require(rig.wall.lastScreenshot, "a screenshot was started")
            try job.wait()
            let path = job.path
            defer { unlink(path) }
            let window = try #require(rig.wall.rgb(of: PixelRect(x: 0, y: 0, width: 640, height: 360)))
            #expect(path.hasSuffix(".png") && path.contains("spyglass-wall-"))
            let png = try #require(Self.decodePNG(path), "IMG_Load: \(String(cString: SDL_GetError()))")
            #expect(png.width == 640 && png.height == 360)
            #expect(png.rgb == window, "the PNG's pixels are the window's")
            rig.wall.apply(.key(.feed(1)))
            rig.wall.apply(.key(.screenshot))
            let focusedJob = try #require(rig.wall.lastScreenshot)
            try focusedJob.wait()
            let focused = focusedJob.path
            defer { unlink(focused) }
            #expect(focused.contains("spyglass-lime-"), "named with the focused feed: \(focused)")
        }
    }

    @Test("the title is UTF-8: _NET_WM_NAME is set and WM_NAME is not Latin-1 garbage",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xprop")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/xwininfo"), "xprop/xwininfo not installed (x11-utils)"))
    func titleIsUTF8() throws {
        try withWall { rig in
            // XAUTHORITY too: under xvfb-run the display wants its cookie.
            var env = ["DISPLAY": String(cString: getenv("DISPLAY"))]
            if let auth = getenv("XAUTHORITY") { env["XAUTHORITY"] = String(cString: auth) }
            let (_, tree, _) = try Fixtures.run("/usr/bin/xwininfo", ["-root", "-children"], environment: env)
            let line = try #require(tree.split(separator: "\n").first { $0.contains("\"Spyglass") }, "the window in \(tree)")
            let id = String(line.drop { $0 == " " }.prefix { $0 != " " })
            let (rc, props, err) = try Fixtures.run("/usr/bin/xprop", ["-id", id, "_NET_WM_NAME", "WM_NAME"],
                                                    environment: env.merging(["LC_ALL": "C.UTF-8"]) { $1 })
            #expect(rc == 0, "\(err) (window \(id) in \(line))")
            #expect(props.contains("_NET_WM_NAME(UTF8_STRING) = \"Spyglass — 4 feeds — 4 live\""), "\(props)")
            #expect(!props.contains("â"), "\(props)")
        }
    }

    @Test("keys and clicks through SDL's own event queue reach the wall while pictures flow")
    func sdlEventsReachTheWall() throws {
        try withWall { rig in
            let id = rig.wall.surface.window.id
            var key = SDL_Event()
            key.key.type = SDL_KEYDOWN.rawValue
            key.key.windowID = id
            key.key.state = UInt8(SDL_PRESSED)
            key.key.keysym.sym = Key.feed(1).sdlCode
            #expect(SDL_PushEvent(&key) == 1, "SDL_PushEvent: \(String(cString: SDL_GetError()))")
            #expect(rig.step { rig.wall.view.focus == 1 }, "the key 2 focused feed 2")
            var click = SDL_Event()
            click.button.type = SDL_MOUSEBUTTONDOWN.rawValue
            click.button.windowID = id
            click.button.button = UInt8(SDL_BUTTON_LEFT)
            click.button.x = 10
            click.button.y = 10
            #expect(SDL_PushEvent(&click) == 1)
            #expect(rig.step { rig.wall.view.focus == nil }, "a click went back to the wall")
        }
    }

    @Test("i shows each tile's last second (fps, bitrate, stages) over its picture, in boxes read back from the window")
    func overlayOfTheLastSecond() throws {
        try withWall(width: 1280, height: 720) { rig in
            let tile = try #require(rig.wall.rect(ofFeed: 0))
            rig.wall.apply(.key(.lastSecond))
            #expect(rig.wall.view.overlay)
            // The overlay's second is computed once a second: wait for one taken after the first picture.
            #expect(rig.step { rig.wall.overlayLines(ofFeed: 0).first?.hasPrefix("H.264") == true }, "lines: \(rig.wall.overlayLines(ofFeed: 0))")
            let lines = rig.wall.overlayLines(ofFeed: 0)
            #expect(lines[0].hasPrefix("H.264") && lines[0].hasSuffix(" · resets 0"), "\(lines)")
            #expect(lines[1].contains(" fps in · ") && lines[1].contains(" shown · ") && lines[1].hasSuffix("b/s"), "\(lines)")
            #expect(lines.contains { $0.contains("decode ") }, "\(lines)")
            // The first line's box, above the name and the badge: dark where the red picture was.
            let lineHeight = Int(WallSurface.fontPixels) + 8
            let first = tile.y + tile.height - lineHeight - 6 - (lineHeight + 2) * (lines.count + 1)
            #expect(rig.step { rig.pixel(tile.x + 7, first + 1) == (16, 16, 20) }, "box at y \(first): \(rig.pixel(tile.x + 7, first + 1))")
            rig.wall.apply(.key(.lastSecond))
            #expect(rig.step { Self.close(rig.pixel(tile.x + 7, first + 1), Self.colours[0].rgb) }, "i again: the picture is clear")
        }
    }

    @Test("q closes the wall: every feed stops and the wall is done")
    func quitStopsEveryFeed() throws {
        try withWall { rig in
            rig.wall.apply(.key(.quit))
            #expect(rig.wall.quitRequested)
            #expect(!rig.wall.step(waitMillis: 0))
            #expect(rig.pipelines.allSatisfy { $0.isStopping })
            let joined = rig.pipelines.allSatisfy { $0.join(timeoutMicros: Int(Self.deadlineSeconds * 1e6)) }
            #expect(joined, "every feed's thread ended")
        }
    }

    @Test("a feed that could not start keeps its tile: slate, never black, with the failed badge and the reason")
    func aFeedThatCouldNotStartKeepsItsTile() throws {
        let screen = try VirtualScreen()
        defer { screen.stop() }
        try screen.whileDisplaySet {
            var settings = WallWindow.Settings()
            settings.size = (640, 180)
            let feeds = [WallFeed.failed(name: "udp://:5600", reason: "port 5600 is in use"),
                         WallFeed.failed(name: "Yard", reason: "connection refused")]
            let wall = try WallWindow(system: try SDLVideoSystem(), feeds: feeds, settings: settings)
            #expect(!wall.step(waitMillis: 0), "nothing runs: the wall is done at once")
            #expect(wall.badge(ofFeed: 0) == .failed("port 5600 is in use"))
            #expect(wall.badge(ofFeed: 1).text == "failed: connection refused")
            let bg = WallWindow.background
            let centre = try #require(wall.rgb(of: PixelRect(x: 160, y: 90, width: 1, height: 1)))
            #expect(centre == [bg.r, bg.g, bg.b], "slate, not black: \(centre)")
            #expect(wall.currentTitle == "Spyglass — 2 feeds — 2 failed", "\(wall.currentTitle)")
        }
    }

    /// Three feeds on a 2x2 grid: the fourth cell is slate too (it was left black).
    @Test func aGridCellWithNoFeedIsSlateNotBlack() throws {
        let screen = try VirtualScreen()
        defer { screen.stop() }
        try screen.whileDisplaySet {
            var settings = WallWindow.Settings()
            settings.size = (640, 360)
            let feeds = ["A", "B", "C"].map { WallFeed.failed(name: $0, reason: "connection refused") }
            let wall = try WallWindow(system: try SDLVideoSystem(), feeds: feeds, settings: settings)
            wall.step(waitMillis: 0)
            #expect(wall.view.layout == WallLayout(columns: 2, rows: 2))
            let bg = WallWindow.background
            let empty = try #require(wall.rgb(of: PixelRect(x: 480, y: 270, width: 1, height: 1)))
            #expect(empty == [bg.r, bg.g, bg.b], "the empty cell: \(empty)")
        }
    }

    /// Decodes a PNG with SDL2_image into 8-bit RGB rows.
    static func decodePNG(_ path: String) -> (width: Int, height: Int, rgb: [UInt8])? {
        guard let loaded = IMG_Load(path) else { return nil }
        defer { SDL_FreeSurface(loaded) }
        guard let rgb = SDL_ConvertSurfaceFormat(loaded, SDL_PIXELFORMAT_RGB24.rawValue, 0) else { return nil }
        defer { SDL_FreeSurface(rgb) }
        let w = Int(rgb.pointee.w), h = Int(rgb.pointee.h), pitch = Int(rgb.pointee.pitch)
        let p = rgb.pointee.pixels.assumingMemoryBound(to: UInt8.self)
        var out = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h { for i in 0..<(w * 3) { out[y * w * 3 + i] = p[y * pitch + i] } }
        return (w, h, out)
    }
}
