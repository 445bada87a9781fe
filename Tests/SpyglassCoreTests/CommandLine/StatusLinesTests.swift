import Foundation
import Testing

/// Headless `play` on a terminal: one status line per feed, rewritten in place, taken off before
/// the summary lines.
@Suite struct StatusLinesTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (util-linux) is not installed"))
    func statusLinesOnATerminalAreRewrittenInPlace() throws {
        let a = Fixtures.capture("default-720p30.h264"), b = Fixtures.capture("default-720p30.h265")
        // script(1) gives the child a terminal; its output is what the terminal received.
        let command = [Fixtures.spyglassBinary, "play", a, b, "--display", "none"].map { "'\($0)'" }.joined(separator: " ")
        let (rc, out, err) = try Fixtures.run("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(rc == 0, "\(err)")
        #expect(out.contains("1 \(a) · live · "), "\(out.suffix(600))")
        #expect(out.contains("2 \(b) · live · "), "\(out.suffix(600))")
        #expect(out.contains("\u{1B}[2F\u{1B}[J"), "two lines taken back before they are rewritten")
        let summaries = out.components(separatedBy: "\u{1B}[2F\u{1B}[J").last ?? ""
        #expect(summaries.components(separatedBy: "frames decoded").count == 3, "both summaries after the last status block: \(summaries)")
        #expect(!summaries.contains(" · live · "))
    }

    @Test func noStatusLinesWithQuiet() throws {
        let a = Fixtures.capture("test/h264-aud.h264")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", a, "--display", "none", "--untimed", "--quiet"])
        #expect(rc == 0)
        #expect(!err.contains(" fps · "), "\(err)")
    }
}
