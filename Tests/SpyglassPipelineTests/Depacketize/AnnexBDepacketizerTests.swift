import Testing
@testable import SpyglassPipeline

/// The raw Annex B depacketizer's events, byte by byte (no socket, no decoder).
@Suite struct AnnexBDepacketizerTests {
    /// The bytes that show an idle flush cut a unit can also end it (its last bytes and the next
    /// start code in one read): the cut is said before the whole unit that repairs it, so that
    /// the feed does not mark the pictures after a finished repair damaged.
    @Test func aCutIsSaidBeforeTheUnitThatRepairsIt() {
        var d = AnnexBDepacketizer(maxUnitBytes: 1 << 20, datagrams: false, idleFlushMicros: 1_000)
        var events: [String] = []
        func note(_ e: DepacketizerEvent) {
            switch e {
            case .unit(let u): events.append(u.repairs == nil ? "unit" : "repaired unit")
            case .cut: events.append("cut")
            case .accessUnitEnd: events.append("end")
            default: break
            }
        }
        let slice: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0x65, 0x88, 0x84, 0x21, 0x43]
        slice.withUnsafeBytes { d.push($0, arrivalMicros: 10, truncated: false, emit: note) }
        d.tick(nowMicros: 5_000, emit: note)   // idle: the slice goes on (cut, as it turns out)
        let rest: [UInt8] = [0x12, 0x34, 0x00, 0x00, 0x00, 0x01, 0x41, 0x9a]
        rest.withUnsafeBytes { d.push($0, arrivalMicros: 9_000, truncated: false, emit: note) }
        #expect(events == ["unit", "end", "cut", "repaired unit"])
    }
}
