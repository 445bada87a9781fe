import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
import TestSupport
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// A NAL unit cut by an idle flush is repaired when the rest of it comes: the picture and the
/// ones after it are decoded again, and what is recorded equals ffmpeg.
@Suite struct RepairTests {
    /// A live TCP feed (1 ms idle flush, ending 1 s after its sender goes) and a sender
    /// connected to it: the harness and the sender's socket.
    private static func startTCPFeed() throws -> (Harness, Int32) {
        let tcp = try TCPSource(listenOn: "127.0.0.1", port: 0)
        let port = tcp.listeningPort
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 1
        let h = Harness(source: tcp, options: o)
        h.start()
        let fd = Sender.tcpConnect(port: port)
        try #require(fd >= 0)
        return (h, fd)
    }

    /// A TCP sender that writes a few bytes at a time and stalls 60 ms (longer than any learned
    /// wait) inside NAL units now and then.
    @Test(arguments: ["test/h264-baseline.h264", "test/h265-main.h265"])
    func aStallingTinyWriterOverTCPIsBitExact(name: String) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let (h, fd) = try Self.startTCPFeed()
        var rng = SeededRandom(seed: 11)
        let chunks = Sender.randomCuts(try Fixtures.bytes(path), sizes: 3...20, seed: 12)
        let stalls = Set((0..<8).map { _ in rng.next(in: 100...(chunks.count - 100)) })
        Sender.tcpWrite(fd: fd, chunks: chunks) { stalls.contains($0) ? 60_000 : 0 }   // a deliberate stall, as a starved sender
        let r = h.finish()
        #expect(r.summary.prematureIdleFlushes > 0, "the stalls cut NAL units")
        #expect(r.summary.repairs > 0, "and the cuts were repaired")
        #expect(r.summary.repairsFailed == 0)
        #expect(r.hashes == expected, "every access unit's final picture equals ffmpeg's")
        // A repair hands each re-decoded picture on before the next: holding the whole run
        // grew the decoder's frame pool for good (the 20 MB left after the soak's burst).
        #expect(r.mostEarlierPicturesAlive <= 1, "a repair held \(r.mostEarlierPicturesAlive) pictures at once")
    }

    /// Where in a picture of several slices the sender stalls.
    enum SliceStall: String, CaseIterable, CustomTestStringConvertible {
        /// Inside the first slice: the flush cuts it (repaired), and the other slices come after the picture went out.
        case insideTheFirstSlice
        /// After the first slice, before the next one's start code: a clean flush between two slices.
        case betweenTwoSlices
        var testDescription: String { rawValue }
    }

    /// A TCP sender writing 1–7 bytes at a time that stalls inside a picture of 4 slices: the
    /// idle flush ends the picture early, and the slices that come after it are put back in it
    /// (decoded again from the last IDR/IRAP) instead of going on as a picture of their own.
    @Test(arguments: ["test/h264-high-4slices.h264", "test/h265-4slices.h265"], SliceStall.allCases)
    func aPictureSplitByAStallIsPutBackWhole(name: String, stall: SliceStall) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(path)).1
        let (h, fd) = try Self.startTCPFeed()
        let stalled = [7, 19, 36]
        for (i, au) in aus.enumerated() {
            let bytes = au.annexB()
            // Start code + first unit(s) up to the first slice, then the stall point in or after it.
            let firstSlice = try #require(au.units.firstIndex { $0.header?.isVCL == true })
            let before = au.units[..<firstSlice].reduce(0) { $0 + 4 + $1.bytes.count }
            let sliceBytes = au.units[firstSlice].bytes.count
            let at = stall == .insideTheFirstSlice ? before + 4 + sliceBytes / 2 : before + 4 + sliceBytes
            let split = stalled.contains(i) ? at : bytes.count
            Sender.tcpWrite(fd: fd, chunks: Sender.randomCuts(Array(bytes[..<split]), sizes: 1...7, seed: UInt64(i)), closing: false)
            guard split < bytes.count else { continue }
            // The sender stalls until the receiver has shown the picture the idle flush closed early.
            #expect(h.waitForFrames(i + 1, timeoutSeconds: 30), "access unit \(i) went out after its first slice")
            Sender.tcpWrite(fd: fd, chunks: Sender.randomCuts(Array(bytes[split...]), sizes: 1...7, seed: UInt64(i) + 99), closing: false)
        }
        close(fd)
        let r = h.finish()
        #expect(r.summary.picturesSplit >= stalled.count, "the stalls split pictures")
        if stall == .insideTheFirstSlice { #expect(r.summary.prematureIdleFlushes >= stalled.count, "and cut their first slices") }
        #expect(r.summary.repairsFailed == 0)
        #expect(r.hashes == expected, "every picture, put back whole, equals ffmpeg's")
    }

    /// A TCP sender that stalls inside the stream's SPS: the idle flush passes it on cut (it
    /// cannot be read), and when the rest comes the whole one is what the decoder gets.
    @Test(arguments: ["test/h264-baseline.h264", "test/h265-main.h265"])
    func aParameterSetCutByAStallIsTakenWhole(name: String) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let (codec, aus, _) = AccessUnitAssembler.accessUnits(ofAnnexB: try Fixtures.bytes(path))
        let bytes = aus.flatMap { $0.annexB() }
        let units = aus.flatMap(\.units)
        let sps = try #require(units.firstIndex { $0.header?.type == (codec == .h264 ? 7 : 33) })
        // Each unit follows a 4-byte start code (AccessUnit.annexB): the middle of the SPS.
        let at = units[..<sps].reduce(0) { $0 + 4 + $1.bytes.count } + 4 + units[sps].bytes.count / 2
        let (h, fd) = try Self.startTCPFeed()
        Sender.tcpWrite(fd: fd, chunks: Sender.randomCuts(Array(bytes[..<at]), sizes: 1...7, seed: 5), closing: false)
        // The sender stalls until the receiver's idle flush has passed the SPS on cut.
        #expect(Wait.until(timeoutSeconds: 30) { h.pipeline.summary.idleFlushes >= 1 }, "an idle flush ended the SPS")
        Sender.tcpWrite(fd: fd, chunks: Sender.randomCuts(Array(bytes[at...]), sizes: 1...7, seed: 6))
        let r = h.finish()
        #expect(r.summary.prematureIdleFlushes >= 1 && r.summary.repairs >= 1, "the SPS was cut, and repaired")
        #expect(r.hashes == expected, "every picture from the first IDR on equals ffmpeg's")
    }

    @Test func theRepairBufferStartsAtAnIDRAndKeepsToItsCaps() {
        var b = RepairBuffer(maxBytes: 1 << 20, maxCount: 3)
        func au(_ i: Int, rap: Bool) -> AccessUnit {
            AccessUnit(codec: .h264, index: i, units: [NALUnit(bytes: [rap ? 0x65 : 0x41, 0x88], lastByteMicros: UInt64(i + 1))],
                       isRandomAccessPoint: rap, hasParameterSets: false, damaged: false, completion: .idleGap,
                       firstByteMicros: 0, lastByteMicros: UInt64(i + 1), completeMicros: 0)
        }
        b.keep(au(0, rap: false))
        #expect(b.count == 0, "nothing before the first IDR")
        b.keep(au(1, rap: true)); b.keep(au(2, rap: false))
        let again = b.replace(NALUnit(bytes: [0x41, 0x88, 0x99]), endingAt: 3)
        #expect(again?.accessUnits.map(\.index) == [1, 2])
        #expect(again?.repaired.index == 2, "the access unit that held the cut unit")
        #expect(again?.accessUnits.last?.units.first?.bytes == [0x41, 0x88, 0x99])
        // A picture split twice: both fragments go back in it.
        var fragment = au(3, rap: false)
        fragment.isSplitFragment = true
        #expect(b.merge(fragment)?.repaired.units.count == 2)
        fragment.index = 4
        #expect(b.merge(fragment)?.accessUnits.map(\.units.count) == [1, 3], "the second fragment joins the same picture")
        fragment.index = 6
        #expect(b.merge(fragment) == nil, "a fragment not after the last one held")
        b.keep(au(3, rap: false)); b.keep(au(4, rap: false))
        #expect(b.count == 0, "past the cap it holds nothing until the next IDR")
        #expect(b.replace(NALUnit(bytes: [0x41]), endingAt: 5) == nil)
    }
}
