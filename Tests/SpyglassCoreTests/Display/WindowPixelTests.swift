import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline

/// What the real SDL window shows, under Xvfb: the window's pixels as it closed (`--snapshot`)
/// against the decoded frame, and the colour cases at 1:1.
///
/// These tests open a real SDL window on their own X server: without Xvfb they say so and skip.
/// Serialized: each test starts `xvfb-run -a`, and two of those started at once can pick the same
/// display number.
@Suite(.serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xvfb-run"),
                "/usr/bin/xvfb-run not found: install the xvfb package (tools/setup installs xvfb and xauth)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"),
                "/usr/bin/Xvfb not found: install the xvfb package (tools/setup installs xvfb and xauth)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xauth"),
                "/usr/bin/xauth not found: install the xauth package (tools/setup installs xvfb and xauth)"))
struct WindowPixelTests {
    struct Picture { var width: Int; var height: Int; var rgb: [UInt8]
        func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * width + x) * 3
            return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
        }
    }

    private func readPPM(_ path: String) throws -> Picture {
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // "P6\nW H\n255\n" then RGB
        var fields: [String] = []
        var i = 0
        var current = ""
        while fields.count < 4 && i < d.count {
            let c = Character(UnicodeScalar(d[i]))
            if c == " " || c == "\n" { if !current.isEmpty { fields.append(current); current = "" } } else { current.append(c) }
            i += 1
        }
        guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]) else {
            throw NSError(domain: "ppm", code: 1)
        }
        return Picture(width: w, height: h, rgb: Array(d[i...]))
    }

    /// Plays `file` in a real window under its own Xvfb and returns the read-back picture.
    private func windowPicture(_ file: String, extra: [String] = []) throws -> Picture {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("snap-\(getpid())-\(UUID().uuidString).ppm").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/xvfb-run",
            ["-a", "-s", "-screen 0 1920x1080x24", Fixtures.spyglassBinary, "play", file, "--untimed",
             "--snapshot", out] + extra)
        #expect(rc == 0, "\(err)")
        #expect(err.contains("window open"), "a real SDL window was used: \(err)")
        return try readPPM(out)
    }

    /// The decoded frame `index` as ffmpeg renders it to RGB at `width`x`height`.
    private func ffmpegRGB(_ file: String, index: Int, width: Int, height: Int) throws -> Picture {
        // A name of its own per call: the file is written and read back here.
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("spyglass-ref-\(getpid())-\(UUID().uuidString).rgb").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", file, "-vf",
            "select=eq(n\\,\(index)),scale=\(width):\(height):flags=bilinear", "-frames:v", "1",
            "-pix_fmt", "rgb24", "-f", "rawvideo", "-y", out])
        #expect(rc == 0, "\(err)")
        return Picture(width: width, height: height, rgb: try Fixtures.bytes(out))
    }

    private func meanAbsoluteDifference(_ a: Picture, _ b: Picture) -> Double {
        guard a.width == b.width, a.height == b.height, a.rgb.count == b.rgb.count else { return .infinity }
        var sum = 0
        for i in 0..<a.rgb.count { sum += abs(Int(a.rgb[i]) - Int(b.rgb[i])) }
        return Double(sum) / Double(a.rgb.count)
    }

    /// `--snapshot` of a wall (issue 18: only a single feed had it): the whole wall window as it
    /// was when it closed, each tile holding its feed's picture.
    @Test func aWallSnapshotIsTheWholeWindow() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("wall-\(getpid())-\(UUID().uuidString).ppm").path
        defer { unlink(out) }
        let a = Fixtures.capture("test/h264-baseline.h264"), b = Fixtures.capture("test/h265-main.h265")
        let (rc, _, err) = try Fixtures.run("/usr/bin/xvfb-run", ["-a", "-s", "-screen 0 1920x1080x24", Fixtures.spyglassBinary,
                                                                  "play", a, b, "--untimed", "--window-size", "640x240", "--snapshot", out])
        #expect(rc == 0, "\(err)")
        #expect(err.contains("wall open"), "the wall window was used: \(err)")
        let p = try readPPM(out)
        #expect(p.width == 640 && p.height == 240 && p.rgb.count == 640 * 240 * 3)
        // Each tile (320x240 side by side) holds a moving test pattern, not a flat fill.
        for tile in 0..<2 {
            let colours = Set((0..<40).map { i in p.pixel(tile * 320 + 40 + i * 6, 60 + i * 3).0 })
            #expect(colours.count > 4, "tile \(tile) shows a picture: \(colours.sorted())")
        }
    }

    /// The window shows the last decoded frame, scaled to the window (here 0.5x), and not some other frame.
    @Test func windowShowsTheDecodedFrameScaled() throws {
        for name in ["default-720p30.h264", "test/h264-444-10bit.h264", "test/h265-main10.h265"] {
            let file = Fixtures.capture(name)
            let frames = try Fixtures.ffmpegFrameMD5(file).count
            let shown = try windowPicture(file, extra: ["--window-size", "640x360"])
            #expect(shown.width == 640)
            #expect(shown.height == 360)
            // Letterboxing: the picture fills the width; for 4:3 sources bars are left/right.
            let ref = try ffmpegRGB(file, index: frames - 1, width: shown.width, height: shown.height)
            let other = try ffmpegRGB(file, index: frames / 2, width: shown.width, height: shown.height)
            let d = meanAbsoluteDifference(shown, ref)
            let dOther = meanAbsoluteDifference(shown, other)
            if name.hasPrefix("default") {
                #expect(d < 4.0, "\(name): window vs decoded frame, mean |Δ| per channel")
                #expect(d < dOther, "\(name): the window shows the last frame, not another")
            } else {
                // 320x240 in a 640x360 window: compare inside the letterbox only.
                let inner = crop(shown, x: 80, y: 0, w: 480, h: 360)
                let refInner = try ffmpegRGB(file, index: frames - 1, width: 480, height: 360)
                let otherInner = try ffmpegRGB(file, index: frames / 2, width: 480, height: 360)
                #expect(meanAbsoluteDifference(inner, refInner) < 4.0, "\(name)")
                #expect(meanAbsoluteDifference(inner, refInner) < meanAbsoluteDifference(inner, otherInner), "\(name)")
                #expect(shown.pixel(20, 180).0 == 0, "\(name): letterbox bar is black")
            }
        }
    }

    private func crop(_ p: Picture, x: Int, y: Int, w: Int, h: Int) -> Picture {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(w * h * 3)
        for row in y..<(y + h) {
            let start = (row * p.width + x) * 3
            rgb += p.rgb[start..<(start + w * 3)]
        }
        return Picture(width: w, height: h, rgb: rgb)
    }

    /// Case colour-matrix-range: the signalled matrix and range are honoured on screen.
    @Test func colourMatrixAndRangeOnScreen() throws {
        let truth = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (191, 191, 191)]
        for name in ["bt601_limited", "bt601_full", "bt709_limited", "bt709_full"] {
            let shown = try windowPicture(Fixtures.capture("cases/\(name).h264"), extra: ["--window-size", "1280x720"])
            #expect(shown.width == 1280)
            for (i, want) in truth.enumerated() {
                let got = shown.pixel(160 + 320 * i, 360)
                #expect(abs(got.0 - want.0) <= 3, "\(name) patch \(i): \(got) vs \(want)")
                #expect(abs(got.1 - want.1) <= 3, "\(name) patch \(i): \(got) vs \(want)")
                #expect(abs(got.2 - want.2) <= 3, "\(name) patch \(i): \(got) vs \(want)")
            }
        }
    }

    /// A single live feed gets the wall's badge: its sender stops, and the window's last picture
    /// is the frozen one dimmed to a quarter, with a red (stalled) or grey (ended) disc.
    @Test func aSingleFeedThatStopsIsDimmedWithABadge() throws {
        let port = try Sender.freeUDPPort()
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("badge-\(getpid())-\(UUID().uuidString).ppm").path
        defer { unlink(out) }
        let player = try Fixtures.start("/usr/bin/xvfb-run", ["-a", "-s", "-screen 0 1280x720x24", Fixtures.spyglassBinary, "play",
                                                             "udp://127.0.0.1:\(port)", "--timeout", "3", "--snapshot", out,
                                                             "--window-size", "640x360"])
        #expect(Wait.until(timeoutSeconds: 60) { Fixtures.udpPortIsBound(port) }, "spyglass bound its port")
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
            "-i", "color=c=red:s=640x360:r=30", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
            "-g", "15", "-pix_fmt", "yuv420p", "-f", "h264", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        #expect(rc == 0, "\(err)")
        let (status, playerErr) = player.wait(timeoutSeconds: 120)
        #expect(status == 0, "\(playerErr)")
        let shown = try readPPM(out)
        let centre = shown.pixel(320, 150)
        #expect(centre.0 > 40 && centre.0 < 90 && centre.1 < 20 && centre.2 < 20, "the frozen red picture dimmed: \(centre)")
        // The badge at the bottom left: its disc, red (stalled) or grey (ended).
        let corner = (300..<360).flatMap { y in (4..<32).map { shown.pixel($0, y) } }
        #expect(corner.contains { $0 == (230, 40, 40) || $0 == (150, 150, 150) }, "the badge's disc")
    }

    /// Two tags stay on at the picture's top right, below the time-code rows: REC (a red disc)
    /// while `--record` writes, and a red DAMAGED on a picture built on concealed data.
    @Test func recordingAndDamageAreTaggedOnThePicture() throws {
        let clip = Fixtures.capture("test/h264-baseline.h264")
        var aus = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(clip)).1.map { $0.annexB() }
        let mid = aus[5].count / 2
        for i in mid..<min(aus[5].count, mid + 24) { aus[5][i] ^= 0x5A }      // picture 5 concealed, 6… on it
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tags-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let corrupt = "\(dir)/corrupt.h264"
        try Data(aus.flatMap { $0 }).write(to: URL(fileURLWithPath: corrupt))
        // The last picture shown is picture 9: on the concealed one's references.
        let shown = try windowPicture(corrupt, extra: ["--frames", "10", "--record", "\(dir)/rec"])
        let top = TimeCode.stripHeight(width: shown.width) + 6
        let region = { (y0: Int) in (y0..<(y0 + 30)).flatMap { y in (max(0, shown.width - 160)..<shown.width).map { shown.pixel($0, y) } } }
        #expect(region(top).contains { $0 == (230, 40, 40) }, "the REC disc")
        #expect(region(top + 36).contains { $0.0 > 235 && (70...110).contains($0.1) && (60...100).contains($0.2) }, "the red DAMAGED text")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rec.mkv"))
    }

    /// `--gravity` in the single-feed window: a 4:3 picture in a 2:1 window has black side bars
    /// when letterboxed, covers the window cropped when filled, and covers it whole when stretched.
    @Test(arguments: ["letterbox", "fill", "stretch"])
    func gravityPlacesThePictureInTheWindow(gravity: String) throws {
        let clip = Fixtures.capture("test/h264-baseline.h264")     // 320x240
        let shown = try windowPicture(clip, extra: ["--window-size", "640x320", "--gravity", gravity, "--frames", "5"])
        try #require(shown.width == 640 && shown.height == 320)
        let left = shown.pixel(10, 160), right = shown.pixel(630, 160)
        let black = { (p: (Int, Int, Int)) in p.0 < 8 && p.1 < 8 && p.2 < 8 }
        if gravity == "letterbox" {
            #expect(black(left) && black(right), "side bars: \(left) \(right)")
        } else {
            #expect(!black(left) || !black(right), "the picture reaches the sides: \(left) \(right)")
        }
        if gravity == "stretch" {
            let stretched = try ffmpegRGB(clip, index: 4, width: 640, height: 320)
            #expect(meanAbsoluteDifference(shown, stretched) < 12, "the whole picture, stretched")
        }
    }
}
