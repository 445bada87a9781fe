import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassCore

/// A NAL unit cut by an idle flush is repaired when the rest of it comes: the picture and the
/// ones after it are decoded again, and what is recorded equals ffmpeg.
@Suite struct RepairTests {
    /// A TCP sender that writes a few bytes at a time and stalls 60 ms (longer than any learned
    /// wait) inside NAL units now and then.
    @Test(arguments: ["test/h264-baseline.h264", "test/h265-main.h265"])
    func aStallingTinyWriterOverTCPIsBitExact(name: String) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let tcp = try TCPSource(listenOn: "127.0.0.1", port: 0)
        let port = tcp.listeningPort
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 1
        let h = Harness(source: tcp, options: o)
        h.start()
        let fd = Sender.tcpConnect(port: port)
        try #require(fd >= 0)
        var rng = SeededRandom(seed: 11)
        let chunks = Sender.randomCuts(try Fixtures.bytes(path), sizes: 3...20, seed: 12)
        let stalls = Set((0..<8).map { _ in rng.next(in: 100...(chunks.count - 100)) })
        Sender.tcpWrite(fd: fd, chunks: chunks) { stalls.contains($0) ? 60_000 : 0 }   // a deliberate stall, as a starved sender
        let r = h.finish()
        #expect(r.summary.prematureIdleFlushes > 0, "the stalls cut NAL units")
        #expect(r.summary.repairs > 0, "and the cuts were repaired")
        #expect(r.summary.repairsFailed == 0)
        #expect(r.hashes == expected, "every access unit's final picture equals ffmpeg's")
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
        b.keep(au(3, rap: false)); b.keep(au(4, rap: false))
        #expect(b.count == 0, "past the cap it holds nothing until the next IDR")
        #expect(b.replace(NALUnit(bytes: [0x41]), endingAt: 5) == nil)
    }
}
