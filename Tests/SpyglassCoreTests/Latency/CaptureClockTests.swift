import Foundation
import Testing
import CFFmpeg
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline
@testable import SpyglassBitstream

/// Capture stamps from a sender whose clock is not ours never give a negative or absurd figure.
@Suite struct CaptureClockTests {
    let now: UInt64 = 1_800_000_000_000_000

    @Test func believableStampsPassUnchanged() {
        var c = CaptureClock()
        let v = c.judge(captureWallMicros: now - 5_000, arrivalWallMicros: now)
        #expect(v.captureWallMicros == now - 5_000 && v.source == .sei && v.note == nil)
    }

    /// Judges frames 33 ms apart whose transit (arrival − capture) is `transits[i]` µs; returns
    /// each frame's verdict.
    static func judge(_ c: inout CaptureClock, transits: [Int64], from start: UInt64)
        -> [(captureWallMicros: UInt64, source: CaptureSource, note: String?)] {
        transits.enumerated().map { i, t in
            let arrival = start + UInt64(i) * 33_333
            return c.judge(captureWallMicros: UInt64(Int64(arrival) - t), arrivalWallMicros: arrival)
        }
    }

    /// A step of this machine's wall clock (chrony's `makestep`, a VM's clock put right) is not
    /// a sender's offset: senders on this machine stamp with the stepped clock, and the tap puts
    /// each arrival on the wall clock as it is then. With the feed's start mapping, every feed of
    /// an hour's soak read "about +550 ms: no glass-to-glass" from such a step to the end.
    @Test(arguments: [550_000 as Int64, -550_000])
    func aStepOfOurOwnWallClockIsNotASendersOffset(step: Int64) {
        let metrics = MetricsRegistry()
        var wallMinusMonotonic: Int64 = 1_800_000_000_000_000 - 1_000_000
        let tap = CaptureClockTap(mode: .absolute(offsetMicros: 0), metrics: metrics, wallMinusMonotonic: { wallMinusMonotonic })
        var figures: [Int64] = []
        for i in 0..<(4 * CaptureClock.evidenceFrames) {
            if i == CaptureClock.evidenceFrames { wallMinusMonotonic += step }
            var timing = FrameTiming()
            timing.lastByteMicros = UInt64(1_000_000 + i * 33_333)
            // Captured 4 ms before it arrived, stamped by the wall clock of the moment.
            timing.captureWallMicros = UInt64(Int64(timing.lastByteMicros) + wallMinusMonotonic - 4_000)
            timing.captureSource = .sei
            var f = DecodedFrame(picture: DecodedPicture(frame: av_frame_alloc()!), index: i, accessUnitIndex: i, timing: timing, damaged: false)
            tap.observe(&f)
            figures.append(f.timing.captureWallMicros == 0 ? -1
                           : Int64(f.timing.lastByteMicros) + wallMinusMonotonic - Int64(f.timing.captureWallMicros))
        }
        #expect(figures.allSatisfy { $0 == 4_000 }, "every frame keeps its 4 ms: \(Set(figures))")
        #expect(metrics.snapshot().clockStatus == nil, "no offset named: \(metrics.snapshot().clockStatus ?? "")")
    }

    @Test(arguments: [3_000_000 as Int64, -3_000_000])
    func aSenderThreeSecondsOffIsNamedOnceAndGivesNoFigure(offset: Int64) throws {
        var c = CaptureClock()
        // A sender `offset` ahead: its stamps are `offset` late, the transit `offset` short.
        let v = Self.judge(&c, transits: Array(repeating: 4_000 - offset, count: 3 * CaptureClock.evidenceFrames), from: now)
        #expect(v.allSatisfy { $0.captureWallMicros == 0 }, "no figure at all, not even before the verdict")
        let notes = v.compactMap(\.note)
        #expect(notes.count == 1, "said once: \(notes)")
        let note = try #require(notes.first)
        #expect(note.contains(offset > 0 ? "ahead of ours" : "behind ours"), "\(note)")
        #expect(v[CaptureClock.evidenceFrames - 1].note != nil, "named at the end of the first run of evidence")
        #expect(v.last?.source == .clockOffset)
        #expect(c.estimatedOffsetMicros.map { abs($0 - offset) < 10_000 } == true)
    }

    /// Issue 17, fault 5: a backlog on our side (frames read ever later, up to 3 s behind, then
    /// caught up) is not a clock offset. No frame gives an impossible figure; once the backlog
    /// has drained the figures come back on their own within ``CaptureClock/evidenceFrames``
    /// frames (half a second at 30 fps), and a real offset after that is still found.
    @Test func aBacklogThatGrowsThenDrainsGivesGlassToGlassBackOnItsOwn() throws {
        var c = CaptureClock()
        let grow = (0..<90).map { Int64(5_000 + $0 * 33_000) }          // 5 ms → about 3 s in 3 s
        let hold = Array(repeating: Int64(3_000_000), count: 30)
        let drain = (0..<30).map { Int64(3_000_000 - $0 * 100_000) }    // caught up in 1 s
        let calm = Array(repeating: Int64(8_000), count: 60)
        let v = Self.judge(&c, transits: grow + hold + drain + calm, from: now)
        for (i, f) in v.enumerated() where f.captureWallMicros > 0 {
            let arrival = now + UInt64(i) * 33_333
            #expect(f.captureWallMicros <= arrival && arrival - f.captureWallMicros <= 2_000_000, "frame \(i): a believable figure only")
        }
        // The last frame over 2 s, then the first figure after it.
        let lastLate = try #require((grow + hold + drain).lastIndex { $0 > CaptureClock.plausibleTransitMicros })
        let back = try #require(v.indices.first { $0 > lastLate && v[$0].captureWallMicros > 0 })
        #expect(back - lastLate <= CaptureClock.evidenceFrames + 1, "glass-to-glass back \(back - lastLate) frames after the backlog")
        #expect(v.suffix(30).allSatisfy { $0.source == .sei && $0.captureWallMicros > 0 }, "and it stays")
        #expect(c.estimatedOffsetMicros == nil)
        // A real offset afterwards: named, no figure.
        let off = Self.judge(&c, transits: Array(repeating: 3_005_000, count: 2 * CaptureClock.evidenceFrames), from: now + 10_000_000)
        #expect(off.suffix(CaptureClock.evidenceFrames).allSatisfy { $0.source == .clockOffset && $0.captureWallMicros == 0 })
        #expect(c.estimatedOffsetMicros.map { abs($0 + 3_005_000) < 10_000 } == true)
    }

    /// The overload of issue 17 as it reached the clock: the receiver stalled for 3 s, then read
    /// its backlog at catch-up speed (a frame a millisecond, each 32 ms less late than the one
    /// before). No offset is named at all, and the figures come back as soon as the frames are
    /// believable again (it used to name "about -2963 ms behind ours" and give none for good).
    @Test func aStallReadOutAtCatchUpSpeedNamesNoOffset() {
        var c = CaptureClock()
        var frames: [(arrival: UInt64, transit: Int64)] = (0..<30).map { (now + UInt64($0) * 33_333, 5_000) }
        let resumed = now + 30 * 33_333 + 3_000_000
        frames += (0..<94).map { (resumed + UInt64($0) * 1_000, max(5_000, 3_000_000 - Int64($0) * 32_000)) }
        frames += (0..<30).map { (resumed + 94_000 + UInt64($0) * 33_333, 5_000) }
        let v = frames.map { c.judge(captureWallMicros: UInt64(Int64($0.arrival) - $0.transit), arrivalWallMicros: $0.arrival) }
        #expect(v.allSatisfy { $0.note == nil }, "\(v.compactMap(\.note))")
        #expect(c.estimatedOffsetMicros == nil)
        let firstBelievable = frames.firstIndex { $0.arrival >= resumed && $0.transit <= CaptureClock.plausibleTransitMicros }!
        #expect(v[firstBelievable...].allSatisfy { $0.captureWallMicros > 0 && $0.source == .sei })
    }

    /// A short spike of late frames (fewer than ``CaptureClock/evidenceFrames``) never calls
    /// the clocks off: those frames give no figure, the next ones do.
    @Test func aShortSpikeOfLateFramesIsNoOffset() {
        var c = CaptureClock()
        let spike = Array(repeating: Int64(2_500_000), count: CaptureClock.evidenceFrames - 1)
        let v = Self.judge(&c, transits: [5_000] + spike + [5_000], from: now)
        #expect(v.allSatisfy { $0.note == nil } && c.estimatedOffsetMicros == nil)
        #expect(v.first?.captureWallMicros ?? 0 > 0 && v.last?.captureWallMicros ?? 0 > 0)
        #expect(v.dropFirst().dropLast().allSatisfy { $0.captureWallMicros == 0 })
    }

    /// A sender whose clock is stepped right (chrony catching up) gets glass-to-glass back,
    /// with one line saying so.
    @Test func anOffsetThatGoesAwayIsForgotten() throws {
        var c = CaptureClock()
        let n = CaptureClock.evidenceFrames
        let v = Self.judge(&c, transits: Array(repeating: -3_000_000, count: 2 * n) + Array(repeating: 6_000, count: 2 * n), from: now)
        let notes = v.compactMap(\.note)
        #expect(notes.count == 2, "\(notes)")
        #expect(notes.last?.contains("agree with our clock again") == true)
        #expect(v.suffix(n - 1).allSatisfy { $0.captureWallMicros > 0 && $0.source == .sei })
        #expect(c.estimatedOffsetMicros == nil)
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

/// A file's capture stamps are as old as the file: playing it (or a packet capture) must not
/// name its age as the sender's clock offset (a newcomer's finding: "the sender's clock is about
/// -157378 ms behind ours" for a recording made minutes before).
@Suite struct FileCaptureTimeTests {
    @Test func aStampedFileFromTheDayBeforeNamesNoClockOffset() throws {
        let (_, aus, _) = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(Fixtures.capture("test/h264-baseline.h264")))
        let dayBefore = MonotonicClock.wallMicros() - 86_400_000_000
        var stream: [UInt8] = []
        for (i, au) in aus.enumerated() {
            let firstSlice = au.units.firstIndex { $0.header?.isVCL == true } ?? 0
            for (j, unit) in au.units.enumerated() {
                if j == firstSlice {
                    stream += [0, 0, 0, 1] + PrecisionTimestampSEI.nalUnit(micros: dayBefore + UInt64(i) * 33_333, codec: .h264)
                }
                stream += [0, 0, 0, 1] + unit.bytes
            }
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stamped-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/yesterday.h264", csv = dir + "/l.csv"
        try Data(stream).write(to: URL(fileURLWithPath: file))
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", file, "--display", "none", "--latency-log", csv])
        #expect(rc == 0, "\(err)")
        #expect(!err.contains("clock is about"), "no clock offset is named for a file: \(err)")
        let log = try String(contentsOfFile: csv, encoding: .utf8)
        #expect(log.contains("sei-relative"), "its stamps are put on our clock relative to its first picture: \(log.prefix(400))")
    }
}
