import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The OSD as a person sees it (issue 21): a real window under Xvfb plays video while a pymavlink
/// ArduCopter sends at 10 Hz; the window's picture (`--snapshot`) is read back by OCR
/// (tesseract), which must find the flight mode and the altitude on it.
@Suite(.serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xvfb-run"), "xvfb-run missing: run tools/setup"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tesseract"), "tesseract missing: run tools/setup (tesseract-ocr)"))
struct TelemetryOSDTests {
    @Test func theFlightModeAndAltitudeAreReadOffTheWindow() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TelemetryFeedTests.python), "out/venv is missing: run tools/setup")
        let video = try Sender.freeUDPPort(), mav = try Sender.freeUDPPort()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("osd-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let player = try Fixtures.start("/usr/bin/xvfb-run", ["-a", "-s", "-screen 0 1920x1080x24", Fixtures.spyglassBinary, "play",
            "udp://127.0.0.1:\(video)", "--mavlink", "udp://127.0.0.1:\(mav)", "--window-size", "1280x720",
            "--snapshot", "\(dir)/window.ppm", "--timeout", "1"])
        try #require(Wait.until(timeoutSeconds: 60) { Fixtures.udpPortIsBound(video) && Fixtures.udpPortIsBound(mav) }, "spyglass listens")
        // The vehicle flies on after the video ends, so its telemetry is fresh when the window closes.
        let flight = try Fixtures.start(TelemetryFeedTests.python, [TelemetryFeedTests.vehicle, "--to", "udp:127.0.0.1:\(mav)", "--duration", "12"])
        defer { flight.process.terminate(); _ = flight.wait(timeoutSeconds: 10) }
        let (rc, _, sendErr) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(video)", "--duration", "4", "--size", "1280x720"])
        #expect(rc == 0, "\(sendErr)")
        let (status, err) = player.wait(timeoutSeconds: 60)
        #expect(status == 0 && err.contains("window open"), "\(err)")
        // Twice the size, grey, light text made dark: what tesseract reads best.
        let (frc, _, ferr) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", "\(dir)/window.ppm", "-vf",
                                                                   "scale=iw*2:ih*2:flags=bicubic,format=gray,negate", "\(dir)/ocr.png"])
        try #require(frc == 0, "\(ferr)")
        let (orc, text, oerr) = try Fixtures.run("/usr/bin/tesseract", ["\(dir)/ocr.png", "-", "--psm", "11"])
        try #require(orc == 0, "\(oerr)")
        #expect(text.contains("LOITER"), "the flight mode on screen: \(text)")
        #expect(text.range(of: #"ALT 4\d[.,]\d m"#, options: .regularExpression) != nil, "the altitude on screen: \(text)")
    }
}
