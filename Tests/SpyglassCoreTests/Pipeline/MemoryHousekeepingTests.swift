import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// Issue 17, fault 7: what a feed thread frees stays in that thread's malloc arena, and glibc
/// gives back only the top of an arena by itself. The housekeeping thread's trim returns the
/// freed pages in the middle of an arena too.
@Suite struct MemoryHousekeepingTests {
    /// A thread fills its arena with 48 MB of small blocks and frees all but the last (so the
    /// free space is not at the arena's top and free(3) alone returns nothing). The resident size
    /// of the mappings that held the blocks, read from /proc/self/smaps, falls by most of the
    /// 48 MB once the housekeeping thread has trimmed after the frees.
    @Test func theHousekeepingTrimReturnsWhatAFeedThreadFreed() throws {
        let blockBytes = 4_000, count = 12_000
        let addresses = Locked<[UInt]>([])
        let done = Locked(false)
        let t = Thread {
            var blocks: [UnsafeMutableRawPointer] = []
            for _ in 0..<count {
                guard let p = malloc(blockBytes) else { break }
                memset(p, 0x5a, blockBytes)
                blocks.append(p)
            }
            for p in blocks.dropLast() { free(p) }
            addresses.set(blocks.map { UInt(bitPattern: $0) })
            done.set(true)
        }
        t.start()
        #expect(Wait.until(timeoutSeconds: 60) { done.get() }, "the allocating thread did not finish")
        let blocks = addresses.get()
        try #require(blocks.count == count, "malloc failed after \(blocks.count) blocks")
        defer { free(UnsafeMutableRawPointer(bitPattern: blocks[blocks.count - 1])) }

        let mappings = try Self.mappings(holding: blocks)
        let before = try Self.residentKiB(of: mappings)
        let freedKiB = (count - 1) * blockBytes / 1024
        try #require(before >= freedKiB * 8 / 10, "the freed blocks are not resident to begin with: \(before) KiB in \(mappings.count) mappings, first block \(String(blocks[0], radix: 16))")

        let trimsBefore = MemoryPolicy.trimCounts.all
        MemoryPolicy.startHousekeeping(intervalMillis: 50)
        #expect(Wait.until(timeoutSeconds: 60) { MemoryPolicy.trimCounts.all >= trimsBefore + 2 },
                "the housekeeping thread never trimmed")
        let after = try Self.residentKiB(of: mappings)
        #expect(before - after >= freedKiB * 7 / 10,
                "resident \(before) KiB before the trim, \(after) KiB after; \(freedKiB) KiB were freed")
    }

    private struct Mapping: Hashable { let start: UInt, end: UInt }

    /// The address ranges of /proc/self/smaps that hold any of `addresses`.
    private static func mappings(holding addresses: [UInt]) throws -> Set<Mapping> {
        let all = try smaps().map(\.mapping)
        var found = Set<Mapping>()
        for a in addresses { if let m = all.first(where: { $0.start <= a && a < $0.end }) { found.insert(m) } }
        return found
    }

    /// The summed `Rss:` of `mappings`, KiB.
    private static func residentKiB(of mappings: Set<Mapping>) throws -> Int {
        try smaps().filter { mappings.contains($0.mapping) }.reduce(0) { $0 + $1.rssKiB }
    }

    /// Each mapping of /proc/self/smaps with its `Rss:` line, KiB.
    private static func smaps() throws -> [(mapping: Mapping, rssKiB: Int)] {
        // Read to the end: /proc files report a size of 0, so a sized read gets nothing.
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? file.close() }
        let text = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        var out: [(mapping: Mapping, rssKiB: Int)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]), !out.isEmpty {
                out[out.count - 1].rssKiB = kib
            } else if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let ends = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                if ends.count == 2 { out.append((Mapping(start: ends[0], end: ends[1]), 0)) }
            }
        }
        return out
    }
}
