import Foundation
import Testing
@testable import SpyglassCore

/// Capture stamps from a sender whose clock is not ours never give a negative or absurd figure.
@Suite struct CaptureClockTests {
    let now: UInt64 = 1_800_000_000_000_000

    @Test func believableStampsPassUnchanged() {
        var c = CaptureClock()
        let v = c.judge(captureWallMicros: now - 5_000, arrivalWallMicros: now)
        #expect(v.captureWallMicros == now - 5_000 && v.source == .sei && v.note == nil)
    }

    @Test(arguments: [3_000_000 as Int64, -3_000_000])
    func aSenderThreeSecondsOffIsNamedOnceAndGivesNoFigure(offset: Int64) throws {
        var c = CaptureClock()
        let first = c.judge(captureWallMicros: UInt64(Int64(now) - 4_000 + offset), arrivalWallMicros: now)
        #expect(first.captureWallMicros == 0 && first.source == .clockOffset)
        let note = try #require(first.note)
        #expect(note.contains(offset > 0 ? "ahead of ours" : "behind ours"), "\(note)")
        #expect(c.estimatedOffsetMicros.map { abs($0 - offset) < 10_000 } == true)
        let later = c.judge(captureWallMicros: UInt64(Int64(now) + 33_000 - 4_000 + offset), arrivalWallMicros: now + 33_000)
        #expect(later.captureWallMicros == 0 && later.note == nil, "said once; no figure afterwards")
    }

    @Test func aKnownOffsetIsCorrected() {
        var c = CaptureClock(mode: .absolute(offsetMicros: 3_000_000))
        let v = c.judge(captureWallMicros: now - 4_000 + 3_000_000, arrivalWallMicros: now)
        #expect(v.source == .sei && v.captureWallMicros == now - 4_000)
    }

    @Test func relativeModeMeasuresFromTheFastestFrame() {
        var c = CaptureClock(mode: .relative)
        let a = c.judge(captureWallMicros: now + 3_000_000 - 10_000, arrivalWallMicros: now)   // transit 10 ms (offset +3 s)
        let b = c.judge(captureWallMicros: now + 3_000_000 - 4_000, arrivalWallMicros: now + 40_000)  // transit 4 ms… plus 40
        #expect(a.source == .seiRelative && b.source == .seiRelative)
        #expect(a.captureWallMicros <= now && b.captureWallMicros <= now + 40_000, "never after arrival")
    }

    /// The bench with an unsynchronized sender, through its real stamps: the latency log has no
    /// glass-to-glass or sender+network figure at all, and the offset is named.
    @Test(arguments: [3000, -3000])
    func benchWithASenderOffByThreeSeconds(ms: Int) throws {
        let csv = FileManager.default.temporaryDirectory.appendingPathComponent("clock-\(getpid())-\(ms).csv").path
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["bench", "--duration", "1", "--display", "none", "--size", "320x240",
                                                                       "--plot", "none", "--latency-log", csv, "--sender-clock-offset-ms", String(ms)])
        #expect(rc == 3, "the verdict is not a pass: \(out)")
        #expect(out.contains("verdict: clock offset"), "\(out)")
        #expect(err.contains(ms > 0 ? "ahead of ours" : "behind ours"), "\(err)")
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        let header = rows[0].split(separator: ",", omittingEmptySubsequences: false)
        let g2g = try #require(header.firstIndex(of: "glass_to_glass_ms")), sn = try #require(header.firstIndex(of: "sender_network_ms"))
        #expect(rows.count > 10)
        for r in rows.dropFirst() {
            let f = r.split(separator: ",", omittingEmptySubsequences: false)
            #expect(f[g2g].isEmpty && f[sn].isEmpty, "no figure: \(r)")
        }
    }

    /// A stamp with its top bit set (a broken or hostile sender, over SEI or KLV) is no capture
    /// time: no figure, and no arithmetic overflow (it used to stop the process), in any mode.
    @Test(arguments: [CaptureClock.Mode.absolute(offsetMicros: 0), .absolute(offsetMicros: -86_400_000_000), .relative])
    func aStampBeyondAnyClockIsNoCaptureTime(mode: CaptureClock.Mode) {
        var c = CaptureClock(mode: mode)
        for stamp: UInt64 in [0x8000_0000_0000_0001, .max, 1 << 62] {
            let v = c.judge(captureWallMicros: stamp, arrivalWallMicros: now)
            #expect(v.captureWallMicros == 0 && v.source == .none, "\(stamp)")
        }
        #expect(c.judge(captureWallMicros: 1, arrivalWallMicros: now).captureWallMicros <= now, "a tiny stamp does not trap either")
    }
}
