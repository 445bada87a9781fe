import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
import TestSupport
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// The burst-end rule for raw Annex B over UDP: a sender that packs each access unit into
/// full-size datagrams and one short last one ends its access unit with that short datagram.
///
/// Serialized: two of the tests time a live UDP receiver against a sender's pauses.
@Suite(.serialized) struct BurstEndTests {
    /// Trust is earned by clean flushes after short datagrams, and withdrawn by a split picture
    /// or a cut NAL unit (twice as many clean ones needed after each misplaced trust).
    @Test func trustIsEarnedAndWithdrawn() {
        var p = IdleFlushPolicy(baseMicros: 1_000)
        func frame() {
            p.noteDatagram(size: 1200); p.noteDatagram(size: 1200); p.noteDatagram(size: 700)
        }
        func nextFrameProvesClean() { p.noteDatagram(size: 1200); _ = p.noteCleanFlush() }
        frame()
        #expect(!p.isBurstEnd, "no trust before any clean flush")
        for _ in 0..<IdleFlushPolicy.burstEndTrustCount {
            nextFrameProvesClean()
            p.noteDatagram(size: 1200); p.noteDatagram(size: 650)
        }
        #expect(p.isBurstEnd, "trusted after \(IdleFlushPolicy.burstEndTrustCount) clean flushes")
        p.noteDatagram(size: 1200)
        #expect(!p.isBurstEnd, "a full-size datagram never ends a burst")
        p.noteDatagram(size: 1199)
        #expect(p.isBurstEnd, "one byte short of the full size is short")

        p.noteSplit()
        #expect(!p.isBurstEnd, "a split picture withdraws trust")
        for _ in 0..<IdleFlushPolicy.burstEndTrustCount { nextFrameProvesClean(); p.noteDatagram(size: 500) }
        #expect(!p.isBurstEnd, "after a split, \(IdleFlushPolicy.burstEndTrustCount) clean flushes are not enough")
        for _ in 0..<IdleFlushPolicy.burstEndTrustCount { nextFrameProvesClean(); p.noteDatagram(size: 500) }
        #expect(p.isBurstEnd, "twice as many are")

        p.noteDatagram(size: 1200)   // more of the unit: the flush after the short 500 cut it
        let midFrame = p.noteCut(pauseMicros: 6_000)
        #expect(midFrame.afterShortDatagram)
        #expect(!p.isBurstEnd, "a cut after a short datagram withdraws trust")
        var q = IdleFlushPolicy(baseMicros: 1_000)
        q.noteDatagram(size: 1200); q.noteDatagram(size: 1200)
        let raised = q.noteCut(pauseMicros: 7_000)   // a pause after a full datagram
        #expect(!raised.afterShortDatagram)
        #expect(q.midFrameMicros == 14_000, "twice the pause the sender took")
        #expect(q.thresholdMicros(datagrams: true) == 14_000, "after a full datagram")
        #expect(!(IdleFlushPolicy(baseMicros: 0).isBurstEnd), "no idle flushing, no burst ends")
    }

    /// A link cut into 200-byte datagrams earns the same trust: its short last datagram ends the
    /// access unit. Below ``IdleFlushPolicy/smallestFullDatagram`` sizes are never trusted.
    @Test func smallDatagramsEarnTrustAboveTheSmallestFullSize() {
        func trusted(full: Int, short: Int) -> Bool {
            var p = IdleFlushPolicy(baseMicros: 1_000)
            for _ in 0...IdleFlushPolicy.burstEndTrustCount {
                for _ in 0..<6 { p.noteDatagram(size: full) }
                p.noteDatagram(size: short)
                p.noteDatagram(size: full)   // the next frame begins: the flush was clean
                _ = p.noteCleanFlush()
                p.noteDatagram(size: short)
            }
            return p.isBurstEnd
        }
        #expect(trusted(full: 200, short: 90), "200-byte datagrams")
        #expect(!trusted(full: IdleFlushPolicy.smallestFullDatagram - 1, short: 40), "below the smallest full size")
    }

    /// A byte stream (TCP, a pipe: no datagram sizes) learns from a cut too: the wait becomes
    /// twice the pause, up to 50 ms, and stays after clean flushes that are not many enough.
    @Test func aByteStreamWaitsLongerAfterACut() {
        var p = IdleFlushPolicy(baseMicros: 1_000)
        #expect(p.thresholdMicros(datagrams: false) == 1_000)
        let raised = p.noteCut(pauseMicros: 7_000)
        #expect(raised.micros == 14_000 && p.thresholdMicros(datagrams: false) == 14_000, "twice the pause the sender took")
        for _ in 0..<100 { _ = p.noteCleanFlush() }
        #expect(p.thresholdMicros(datagrams: false) == 14_000, "100 clean flushes do not lower it")
        _ = p.noteCut(pauseMicros: 40_000)
        #expect(p.thresholdMicros(datagrams: false) == 50_000, "at most 50 ms")
    }

    /// A sender whose "full" datagrams wander by a few bytes is not packing: no trust, ever.
    @Test func wanderingFullSizesAreNeverTrusted() {
        var p = IdleFlushPolicy(baseMicros: 1_000)
        var rng = SeededRandom(seed: 7)
        for _ in 0..<200 {
            for _ in 0..<4 { p.noteDatagram(size: 1200 - rng.next(in: 0...8)) }
            p.noteDatagram(size: 300)
            #expect(!p.isBurstEnd)
            p.noteDatagram(size: 1200)
            _ = p.noteCleanFlush()
        }
    }

    /// The slice count is trusted only after several pictures agree.
    @Test func slicesPerPictureNeedsAgreement() {
        var p = IdleFlushPolicy(baseMicros: 1_000)
        for _ in 0..<(IdleFlushPolicy.slicesRunNeeded - 1) { p.noteAccessUnit(slices: 4) }
        #expect(p.slicesPerPicture == nil)
        p.noteAccessUnit(slices: 4)
        #expect(p.slicesPerPicture == 4)
        p.noteAccessUnit(slices: 1)
        #expect(p.slicesPerPicture == nil, "a change starts the count over")
    }

    /// A flush between two slices of one picture is noticed: counted, and the fragment is damaged.
    @Test func aFlushBetweenSlicesOfOnePictureIsCountedAsASplit() throws {
        let bytes = try Fixtures.bytes(Fixtures.capture("test/h264-high-4slices.h264"))
        var scanner = AnnexBScanner()
        var units: [NALUnit] = []
        scanner.push(bytes, arrivalMicros: 0) { units.append($0) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0) }
        var asm = AccessUnitAssembler(codec: .h264)
        var aus: [AccessUnit] = []
        var slicesSeen = 0
        var flushedOnce = false
        for u in units {
            if let au = asm.push(u) { aus.append(au) }
            guard let h = NALUnitHeader(codec: .h264, bytes: u.bytes), h.isVCL else { continue }
            slicesSeen += 1
            // Flush after the first slice of the third picture (slices 9..12 belong to it).
            if slicesSeen == 9 && !flushedOnce, let au = asm.flush(atMicros: 0, reason: .burstEnd) {
                aus.append(au); flushedOnce = true
            }
        }
        if let au = asm.flush(atMicros: 0, reason: .endOfStream) { aus.append(au) }
        #expect(flushedOnce)
        #expect(asm.counters.picturesSplit == 1)
        let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture("test/h264-high-4slices.h264")).count
        #expect(aus.count == expected + 1, "the split picture went on in two parts")
        #expect(aus.filter(\.damaged).count == 1, "the fragment is marked damaged")
        #expect(aus.filter { $0.completion == .burstEnd }.count == 1)
    }

    /// Real socket: a sender packs multi-slice access units, then (after trust was earned)
    /// switches to one datagram per NAL unit. No burst end may close a picture before its last
    /// slice, and every frame shown as undamaged is one of ffmpeg's.
    @Test func aSenderSwitchingToOneWritePerSliceSplitsNoPicture() throws {
        let one = try Fixtures.bytes(Fixtures.capture("test/h264-high-4slices.h264"))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spyglass-switch-\(getpid()).h264").path
        try Data(one + one).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = try Fixtures.ffmpegFrameMD5(path)
        var datagrams: [[UInt8]] = []
        var firstOfAU: Set<Int> = []
        for (k, au) in Sender.accessUnits(of: one + one).enumerated() {
            firstOfAU.insert(datagrams.count)
            if k < 50 {
                var i = 0
                while i < au.count { datagrams.append(Array(au[i..<min(au.count, i + 1200)])); i += 1200 }
            } else {
                var scanner = AnnexBScanner()
                var units: [[UInt8]] = []
                scanner.push(au, arrivalMicros: 0) { units.append($0.bytes) }
                scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
                for u in units { datagrams.append([0, 0, 0, 1] + u) }
            }
        }
        let r = try receiveLive(datagrams, burstsStartingAt: firstOfAU, pauseMicros: 10_000, frames: expected.count)
        let reference = Set(expected.map(\.md5))
        var wrongUnflagged = 0
        for (i, hash) in r.hashes.enumerated() where !r.damaged[i] && !reference.contains(hash.md5) {
            wrongUnflagged += 1
            // A busy machine may delay the sender by more than the idle time between two NAL
            // units, and an idle flush then splits a picture; a burst end never may.
            #expect(r.timings[i].completion != AccessUnit.Completion.burstEnd,
                    "frame \(i): a burst end closed a picture before its last slice")
        }
        // The first part of a split picture goes out before the split is known; every such
        // picture is counted, and the pictures after it are marked damaged.
        #expect(wrongUnflagged <= r.summary.picturesSplit + r.summary.prematureIdleFlushes)
        #expect(r.hashes.count > 0)
    }

    /// A flood of tiny NAL units with no picture (5-byte SEIs) before a real stream: bounded
    /// memory and time, counted, and the stream after it decodes whole.
    @Test func aFloodOfTinyUnitsIsDroppedAndTheStreamAfterItDecodes() throws {
        let capture = try Fixtures.bytes(Fixtures.capture("test/h264-high-4slices.h264"))
        let flood = Array([[UInt8]](repeating: [0, 0, 1, 6, 0x80], count: 30_000).joined())
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spyglass-flood-\(getpid()).h264").path
        try Data(flood + capture).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try Harness.decodeFile(path)
        #expect(r.hashes == (try Fixtures.ffmpegFrameMD5(Fixtures.capture("test/h264-high-4slices.h264"))))
        #expect(r.summary.unitsWithoutPicture >= 30_000 - AccessUnitAssembler.maxUnitsPerAccessUnit)
    }

    /// Real socket: every access unit packed into 1200-byte datagrams plus a short last one.
    /// After the trust phase the short datagram ends access units (no idle wait), and no picture
    /// a burst end closed is wrong, for single- and multi-slice pictures of both codecs. (How many
    /// end that way depends on the receiver keeping up: a debug build on a busy machine reads a
    /// backlog, whose access units end when the next one starts.)
    @Test func packedDatagramsEndAccessUnitsWithNoWait() throws {
        var burstEndsSeen = 0
        for name in ["default-720p30.h264", "test/h265-4slices.h265", "test/h264-high-4slices.h264"] {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            var datagrams: [[UInt8]] = []
            var firstOfAU: Set<Int> = []
            for au in Sender.accessUnits(of: try Fixtures.bytes(path)) {
                firstOfAU.insert(datagrams.count)
                var i = 0
                while i < au.count { datagrams.append(Array(au[i..<min(au.count, i + 1200)])); i += 1200 }
            }
            // Bursts 10 ms apart, each sent at once, as a packing sender does.
            let r = try receiveLive(datagrams, burstsStartingAt: firstOfAU, pauseMicros: 10_000, frames: expected.count)
            let reference = Set(expected.map(\.md5))
            var wrongUnflagged = 0
            for (i, hash) in r.hashes.enumerated() where !reference.contains(hash.md5) {
                #expect(r.timings[i].completion != AccessUnit.Completion.burstEnd,
                        "\(name) frame \(i): a burst end closed a picture early")
                if !r.damaged[i] { wrongUnflagged += 1 }
            }
            #expect(wrongUnflagged <= r.summary.picturesSplit + r.summary.prematureIdleFlushes, "\(name)")
            #expect(r.hashes.count == expected.count, "\(name)")
            burstEndsSeen += r.timings.filter { $0.completion == AccessUnit.Completion.burstEnd }.count
        }
        #expect(burstEndsSeen > 0, "the burst-end rule fired")
    }

    /// Sends `datagrams` to a live receiver with the default idle-flush rule, pausing before each
    /// datagram in `burstsStartingAt` (but the first), and returns what it decoded.
    private func receiveLive(_ datagrams: [[UInt8]], burstsStartingAt firsts: Set<Int>, pauseMicros: Int,
                             frames: Int) throws -> Harness.Result {
        var options = Harness.liveOptions(frames: frames)
        options.idleFlushMicros = ReceiverOptions().idleFlushMicros   // the default rule under test
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let boundPort = source.boundPort
        let h = Harness(source: source, options: options)
        h.start()
        Sender.udp(port: boundPort, datagrams: datagrams,
                   pauseMicros: { firsts.contains($0) && $0 > 0 ? pauseMicros : 0 }, yieldEvery: 0)
        return h.finish()
    }
}
