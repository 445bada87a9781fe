import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// `play --display none` prints a status line per feed while it runs: plain lines into a pipe or
/// a log, redrawn in place on a terminal.
@Suite struct StatusLineTests {
    /// 60 pictures at 30 fps: a file paced for 2 s.
    private var clip: String { Fixtures.capture("test/h264-baseline.h264") }

    @Test func aPipeGetsPlainStatusLinesWithTheFeedsFigures() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", clip, "--display", "none", "--status", "0.5"])
        #expect(rc == 0, "\(err)")
        let lines = err.split(separator: "\n").filter { $0.hasPrefix("spyglass: 1 \(clip) · ") }
        #expect(!lines.isEmpty, "\(err)")
        #expect(lines.contains { $0.contains(" · live · ") && $0.contains(" fps · ") && $0.contains(" · age ") }, "\(lines)")
        #expect(!err.contains("\u{1B}["), "no terminal escapes into a pipe")
    }

    @Test func aTerminalGetsTheBlockRedrawnInPlace() throws {
        // script(1) gives spyglass a pseudo-terminal as stderr.
        let command = "\(Fixtures.spyglassBinary) play \(clip) --display none --status 0.5"
        let (rc, out, err) = try Fixtures.run("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(rc == 0, "\(err)")
        #expect(out.contains("\u{1B}[1F\u{1B}[J1 \(clip) · "), "back to the block, erase, the feed's line: \(out.debugDescription)")
    }

    @Test func statusZeroPrintsNone() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", clip, "--display", "none", "--status", "0"])
        #expect(rc == 0, "\(err)")
        #expect(!err.contains(" · live · "), "\(err)")
    }
}
