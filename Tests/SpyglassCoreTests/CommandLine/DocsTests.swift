import Foundation
import Testing

/// The docs behind the README stay true to the program and the tree (issue 18): every option a
/// command's `--help` prints is in docs/usage.md, and docs/architecture.md's folder table names
/// exactly the folders under Sources/.
@Suite struct DocsTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: Fixtures.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The `--options` in a help text (`--record-split-mb`, not `--` alone).
    static func options(in help: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "--[a-z][a-z0-9-]*")
        let range = NSRange(help.startIndex..., in: help)
        return Set(pattern.matches(in: help, range: range).compactMap { Range($0.range, in: help).map { String(help[$0]) } })
    }

    @Test(arguments: ["play", "send", "bench", "probe", "replay"])
    func everyOptionTheHelpPrintsIsInUsage(command: String) throws {
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, [command, "--help"])
        #expect(rc == 0, "\(command) --help exits 0: \(err)")
        let help = out + err
        let found = Self.options(in: help)
        #expect(found.count >= 3, "\(command) --help prints its options: \(help.prefix(200))")
        let usage = try Self.read("docs/usage.md")
        let missing = found.filter { !usage.contains("`\($0)") && !usage.contains(" \($0)") }.sorted()
        #expect(missing.isEmpty, "options of `spyglass \(command) --help` missing from docs/usage.md: \(missing)")
    }

    @Test func replayHasItsOwnHelp() throws {
        let (rc, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", "--help"])
        #expect(rc == 0)
        for option in ["--speed", "--loop", "--from", "--to", "--port", "--send"] {
            #expect(out.contains(option), "replay --help explains \(option)")
        }
        #expect(out.hasPrefix("usage: spyglass replay"), "not play's help: \(out.prefix(80))")
    }

    @Test func theArchitectureTableNamesExactlyTheFoldersUnderSources() throws {
        let doc = try Self.read("docs/architecture.md")
        let fm = FileManager.default
        let sources = Fixtures.root.appendingPathComponent("Sources")
        let modules = try fm.contentsOfDirectory(atPath: sources.path).filter { !$0.hasPrefix(".") }
        for m in modules {
            #expect(doc.contains("Sources/\(m)"), "docs/architecture.md names Sources/\(m)")
        }
        // Every module's folders too (`Depacketize/`, `Sink/`, `Wall/` …).
        for m in modules {
            let module = sources.appendingPathComponent(m)
            for folder in (try? fm.contentsOfDirectory(atPath: module.path)) ?? [] where !folder.hasPrefix(".") {
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: module.appendingPathComponent(folder).path, isDirectory: &isDir), isDir.boolValue,
                      folder != "include" else { continue }
                #expect(doc.contains("`\(folder)/`"), "docs/architecture.md names \(m)'s \(folder)/")
            }
        }
        // And nothing it names as a module is gone.
        let named = try NSRegularExpression(pattern: "Sources/([A-Za-z0-9]+)")
        let range = NSRange(doc.startIndex..., in: doc)
        for match in named.matches(in: doc, range: range) {
            guard let r = Range(match.range(at: 1), in: doc) else { continue }
            #expect(modules.contains(String(doc[r])), "docs/architecture.md names Sources/\(doc[r]), which is not in the tree")
        }
    }

    @Test func theReadmeIsAFrontDoor() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 250, "README.md has \(lines) lines")
        #expect(readme.contains("tools/setup && tools/play-default"))
        #expect(readme.contains("tools/setup && tools/test && tools/fuzz --smoke && tools/soak --ci"))
        let links = try NSRegularExpression(pattern: "\\]\\((docs/[^)#]+|captures/[^)#]+)")
        for m in links.matches(in: readme, range: NSRange(readme.startIndex..., in: readme)) {
            guard let r = Range(m.range(at: 1), in: readme) else { continue }
            #expect(FileManager.default.fileExists(atPath: Fixtures.root.appendingPathComponent(String(readme[r])).path),
                    "the README links to \(readme[r]), which exists")
        }
    }
}
