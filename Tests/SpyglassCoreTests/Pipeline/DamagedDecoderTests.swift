import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassBitstream
@testable import SpyglassTransport
import TestSupport
@testable import SpyglassIngest

/// Issue 17: what damaged input made libavcodec allocate (PPS ids a broken unit named, tables
/// for the sizes it claimed) stayed for the life of the decoder's context, about 5 MB after the
/// soak's garbage burst. After damage the decoder now opens afresh at the next clean IDR.
@Suite(.serialized) struct DamagedDecoderTests {
    private static func opens(_ h: Harness) -> Int { h.pipeline.metrics.snapshot().counters[.decoderOpens] ?? 0 }

    /// One RTP packet of the 6th picture lost: the decoder opens a second time at the IDR of
    /// the next GOP (picture 32), and every picture from there equals ffmpeg's, B-frames and all.
    @Test(arguments: ["test/h264-baseline.h264", "test/h264-main-bframes.h264", "test/h265-main.h265"])
    func afterALossTheDecoderOpensAfreshAtTheNextIDR(name: String) throws {
        let path = Fixtures.capture(name)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let codec: VideoCodec = name.hasSuffix(".h265") ? .h265 : .h264
        var groups = try RTPIngestTests.rtpPackets(path, codec: codec)
        try #require(groups.count > 40 && groups[5].count >= 1)
        groups[5].removeFirst()   // the first packet of a P picture: its slice header is gone
        let source = try UDPSource(host: "127.0.0.1", port: 0)
        let port = source.boundPort
        var o = Harness.liveOptions(frames: expected.count, idleFlushMicros: 1_000)
        o.timeoutSeconds = 2
        let h = Harness(source: source, options: o)
        h.start()
        Sender.udp(port: port, datagrams: groups.flatMap { $0 }, yieldEvery: 8)
        let r = h.finish()
        #expect(r.summary.datagramsLost == 1)
        #expect(r.damaged.contains(true), "the loss damaged a picture")
        #expect(Self.opens(h) == 2, "opened at the start and afresh at the next IDR: \(Self.opens(h)) opens")
        let fromIDR = expected.count - 31
        #expect(r.hashes.suffix(fromIDR) == expected.suffix(fromIDR), "from the next IDR on, ffmpeg's pictures")
        #expect(!r.damaged.suffix(fromIDR).contains(true))
    }
}
