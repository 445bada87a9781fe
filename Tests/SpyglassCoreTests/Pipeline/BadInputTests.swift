import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassTransport
@testable import SpyglassIngest

/// Faults a bad-input round found: each now a clear error, a counted drop, or damage shown as such.
@Suite struct BadInputTests {
    /// Two feeds on one port, two multicast groups: each gets only its own group.
    @Test func twoGroupsOnOnePortStayApart() throws {
        let port = try Sender.freeUDPPort()
        let a = try UDPSource(host: "239.77.1.1", port: port, multicastInterface: "lo")
        let b = try UDPSource(host: "239.77.1.2", port: port, multicastInterface: "lo")
        var o = Harness.liveOptions(frames: 10_000, idleFlushMicros: 1_000)
        o.timeoutSeconds = 1
        let ha = Harness(source: a, options: o), hb = Harness(source: b, options: o)
        ha.start(); hb.start()
        let path = Fixtures.capture("test/h264-aud.h264")
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", path, "udp://239.77.1.1:\(port)?iface=lo", "--fps", "120"])
        #expect(rc == 0, "\(err)")
        let ra = ha.finish(), rb = hb.finish()
        #expect(ra.hashes == (try Fixtures.ffmpegFrameMD5(path)))
        #expect(rb.summary.datagrams == 0, "group .2 got \(rb.summary.datagrams) datagrams sent to .1")
    }

    /// A picture dropped over --max-au-mb: the pictures predicted from it are marked damaged.
    @Test func aDroppedPictureDamagesThoseAfterIt() throws {
        let r = try Harness.decodeFile(Fixtures.capture("default-720p30.h264")) { $0.maxAccessUnitBytes = 19_000 }
        #expect(r.summary.oversizeAccessUnits + r.summary.oversizeNALUnits >= 1)
        #expect(r.summary.damagedAccessUnits >= 1)
        let expected = try Fixtures.ffmpegFrameMD5(Fixtures.capture("default-720p30.h264"))
        // No picture that ffmpeg did not decode is passed off as clean.
        let right = Set(expected.map(\.description))
        let wrongButClean = zip(r.hashes, r.damaged).filter { !$0.1 && !right.contains($0.0.description) }
        #expect(wrongButClean.isEmpty, "\(wrongButClean.count) wrong pictures not flagged damaged")
    }

    @Test func outputsThatWouldOverwriteAnInputAreRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let input = "\(dir)/in.h264"
        try FileManager.default.copyItem(atPath: Fixtures.capture("test/h264-aud.h264"), toPath: input)
        let size = try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int
        for args in [["--framemd5", input], ["--record", "\(dir)/in.h264"], ["--summary", "\(dir)/x", "--framemd5", "\(dir)/x"]] {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", input, "--display", "none"] + args)
            #expect(rc == 1, "\(args): \(err)")
        }
        #expect((try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) == size, "the input is untouched")
    }

    /// One stray RTP packet of another payload type first: the stream's own type is followed.
    @Test func aStrayPayloadTypeDoesNotLockTheFeed() throws {
        var r = RTPReceiver(codec: .h264)
        var units = 0
        r.push(RTPPacket.build(marker: true, payloadType: 97, sequenceNumber: 1, timestamp: 0, ssrc: 9, payload: [0x65, 0x88]), arrivalMicros: 0) { _ in }
        for k in 0..<40 {
            r.push(RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: UInt16(100 + k), timestamp: UInt32(k * 3000), ssrc: 7,
                                   payload: [0x41, 0x9A, UInt8(k)]), arrivalMicros: UInt64(k)) { if case .unit = $0 { units += 1 } }
        }
        #expect(r.payloadType == 96)
        #expect(units > 0)
    }
}
