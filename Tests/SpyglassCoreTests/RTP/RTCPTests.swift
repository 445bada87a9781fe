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
@testable import SpyglassTransport
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// RTCP (RFC 3550 §6): sender reports read, their clock applied to RTP timestamps, receiver
/// reports built and sent, bad packets dropped and counted.
@Suite(.serialized) struct RTCPTests {
    /// A sender report (RFC 3550 §6.4.1) with no report blocks, then an SDES CNAME: a compound
    /// packet as senders send it.
    static func senderReport(ssrc: UInt32, ntp: UInt64, rtp: UInt32, packets: UInt32 = 7, octets: UInt32 = 9000) -> [UInt8] {
        func be(_ w: UInt32) -> [UInt8] { [UInt8(w >> 24), UInt8((w >> 16) & 0xFF), UInt8((w >> 8) & 0xFF), UInt8(w & 0xFF)] }
        let sr: [UInt8] = [0x80, 200, 0, 6] + be(ssrc) + be(UInt32(ntp >> 32)) + be(UInt32(ntp & 0xFFFF_FFFF))
            + be(rtp) + be(packets) + be(octets)
        let sdes: [UInt8] = [0x81, 202, 0, 3] + be(ssrc) + [1, 3] + Array("cam".utf8) + [0, 0, 0]
        return sr + sdes
    }

    /// The NAL units of one Annex B access unit.
    static func units(_ au: [UInt8]) -> [[UInt8]] {
        var s = AnnexBScanner()
        var units: [[UInt8]] = []
        s.push(au, arrivalMicros: 0) { units.append($0.bytes) }
        s.flush(atMicros: 0, reason: .endOfStream) { units.append($0.bytes) }
        return units
    }

    static func parse(_ d: [UInt8]) throws -> [RTCPPacket.SenderReport] {
        try d.withUnsafeBytes { try RTCPPacket.senderReports(in: $0) }
    }

    @Test func aSenderReportInACompoundPacketIsRead() throws {
        let ntp: UInt64 = 0xE8F1_2345_8000_0000
        let reports = try Self.parse(Self.senderReport(ssrc: 0x1234_5678, ntp: ntp, rtp: 0xDEAD_BEEF))
        #expect(reports == [RTCPPacket.SenderReport(ssrc: 0x1234_5678, ntpTimestamp: ntp, rtpTimestamp: 0xDEAD_BEEF,
                                                    packetCount: 7, octetCount: 9000)])
        #expect(reports[0].compactNTP == 0x2345_8000, "LSR: the middle 32 bits")
        #expect(Self.senderReport(ssrc: 1, ntp: ntp, rtp: 0).withUnsafeBytes { RTCPPacket.looksLikeRTCP($0) })
    }

    @Test func malformedPacketsAreOneCountedDropNeverACrash() throws {
        let good = Self.senderReport(ssrc: 1, ntp: 0xE8F1_0000_0000_0000, rtp: 0)
        #expect(throws: RTCPPacket.ParseError.malformed) { try Self.parse(Array(good.prefix(27))) }
        #expect(throws: RTCPPacket.ParseError.malformed) { try Self.parse([0x80, 200, 0, 1, 0, 0, 0, 1]) }   // SR shorter than its sender info
        #expect(throws: RTCPPacket.ParseError.malformed) { try Self.parse([0x80, 200, 0xFF, 0xFF] + good) }  // length past the end
        #expect(throws: RTCPPacket.ParseError.malformed) { try Self.parse([0x40] + good.dropFirst()) }       // version 1
        var rng = SeededRandom(seed: 3550)
        for _ in 0..<20_000 {
            var d = good
            for _ in 0..<Int.random(in: 1...6, using: &rng) { d[Int.random(in: 0..<d.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            d = Array(d.prefix(Int.random(in: 0...d.count, using: &rng)))
            _ = try? Self.parse(d)
        }
        // Through the depacketizer: counted as malformed, the stream goes on.
        var dp = RTPStreamDepacketizer()
        let bad: [UInt8] = [0x80, 200, 0, 9, 1, 2, 3, 4]
        bad.withUnsafeBytes { dp.push($0, arrivalMicros: 1, truncated: false) { _ in } }
        #expect(dp.counts[.rtcpPackets] == 1 && dp.counts[.malformedRTCP] == 1 && dp.counts[.notRTP] == 0)
    }

    @Test func theSenderClockMapsRTPTimestampsAcrossTheWrap() throws {
        let unix: UInt64 = 1_764_600_000_123_456
        let ntp = SenderClock.ntp(unixMicros: unix)
        #expect(SenderClock.unixMicros(ntp: ntp).map { abs(Int64($0) - Int64(unix)) <= 1 } == true, "NTP round trip within 1 µs")
        #expect(ntp >> 32 == unix / 1_000_000 + 2_208_988_800)
        var clock = SenderClock()
        clock.take(.init(ssrc: 5, ntpTimestamp: ntp, rtpTimestamp: 0xFFFF_FF00, packetCount: 0, octetCount: 0))
        let after = try #require(clock.wallMicros(rtpTimestamp: 0x0000_0100 &+ 90_000, ssrc: 5))
        #expect(abs(Int64(after) - Int64(unix + 1_000_000 + 512 * 1_000_000 / 90_000)) <= 1, "0x200 ticks past the wrap, plus 1 s")
        let before = try #require(clock.wallMicros(rtpTimestamp: 0xFFFF_FF00 &- 9_000, ssrc: 5))
        #expect(abs(Int64(before) - Int64(unix - 100_000)) <= 1, "100 ms before the report")
        #expect(clock.wallMicros(rtpTimestamp: 0, ssrc: 6) == nil, "another SSRC's report says nothing about this one")
    }

    @Test func aReceiverReportCountsLossAndEchoesTheLastSenderReport() throws {
        var r = ReceiverReporter(ssrc: 0xABCD)
        for seq in [65_533, 65_534, 65_535, 0, 2, 3] as [UInt16] {   // 1 lost, across the wrap
            let p = RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: seq, timestamp: 1000, ssrc: 0x77, payload: [0x41])
            p.withUnsafeBytes { r.observeRTP($0, arrivalMicros: 1_000_000) }
        }
        let sr = RTCPPacket.SenderReport(ssrc: 0x77, ntpTimestamp: 0xE8F1_2345_6789_0000, rtpTimestamp: 0, packetCount: 0, octetCount: 0)
        r.observe(sr, arrivalMicros: 1_000_000)
        let early = r.reportIfDue(nowMicros: 1_000_001)
        #expect(early == nil, "not due yet")
        let due = r.reportIfDue(nowMicros: 2_000_000)
        let report = try #require(due)
        func word(_ i: Int) -> UInt32 { UInt32(report[i]) << 24 | UInt32(report[i + 1]) << 16 | UInt32(report[i + 2]) << 8 | UInt32(report[i + 3]) }
        #expect(report[0] == 0x81 && report[1] == 201 && word(4) == 0xABCD && word(8) == 0x77)
        #expect(Int(report[12]) == 256 / 7 && word(12) & 0xFF_FFFF == 1, "fraction lost 1/7, cumulative 1")
        #expect(word(16) == 0x1_0003, "extended highest sequence number: one cycle, then 3")
        #expect(word(24) == sr.compactNTP && word(28) == 65_536, "LSR, and DLSR of 1 s in 1/65536 s")
        #expect(report[32] == 0x81 && report[33] == 202, "SDES CNAME follows (RFC 3550 §6.1)")
        let next = r.reportIfDue(nowMicros: 2_000_001)
        #expect(next == nil, "the next one in 2 s")
    }

    /// The clock-offset rules apply to RTCP and KLV times as to SEI stamps, and say the origin.
    @Test func theClockRulesApplyToEveryOrigin() {
        let now: UInt64 = 1_764_600_000_000_000
        for origin in [CaptureSource.rtcp, .klv] {
            var absolute = CaptureClock()
            #expect(absolute.judge(captureWallMicros: now - 5_000, arrivalWallMicros: now, origin: origin).source == origin)
            var late = CaptureClock()
            let verdicts = (0..<CaptureClock.evidenceFrames).map { i in
                late.judge(captureWallMicros: now + 50_000 + UInt64(i) * 33_000, arrivalWallMicros: now + UInt64(i) * 33_000, origin: origin)
            }
            #expect(verdicts.allSatisfy { $0.captureWallMicros == 0 } && verdicts.last?.source == .clockOffset)
            var relative = CaptureClock(mode: .relative)
            #expect(relative.judge(captureWallMicros: now + 3_000_000, arrivalWallMicros: now, origin: origin).source == origin.relative)
        }
        #expect(CaptureSource.rtcp.relative.rawValue == "rtcp-relative" && CaptureSource.klv.relative.rawValue == "klv-relative")
    }

    /// A sender report that comes before the first RTP packet (before the framing is decided)
    /// is kept and given to the RTP depacketizer: the first picture already has its time.
    @Test func aSenderReportBeforeTheFirstRTPPacketIsKept() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")))
        var auto = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 0)
        let unix: UInt64 = 1_764_600_000_000_000
        var times: [UInt64] = []
        Self.senderReport(ssrc: 7, ntp: SenderClock.ntp(unixMicros: unix), rtp: 90_000).withUnsafeBytes {
            auto.push($0, arrivalMicros: 1, truncated: false) { _ in Issue.record("nothing to say before RTP") }
        }
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 7)
        for p in packetizer.packetize(Self.units(aus[0]), timestamp90kHz: 90_000 + 4_500) {
            p.withUnsafeBytes { auto.push($0, arrivalMicros: 2, truncated: false) { if case .captureTime(let w, .rtcp) = $0 { times.append(w) } } }
        }
        #expect(auto.framing == .rtp && times == [unix + 50_000])
        #expect(auto.counts[.senderReports] == 1)
    }

    /// An SEI stamp in the access unit wins over the RTCP time; without one, RTCP's is used.
    @Test func anSEIStampWinsOverTheRTCPTime() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")))
        var dp = RTPStreamDepacketizer()
        var stage = AccessUnitStage()
        var out: [AccessUnit] = []
        let unix: UInt64 = 1_764_600_000_000_000
        Self.senderReport(ssrc: 9, ntp: SenderClock.ntp(unixMicros: unix), rtp: 0).withUnsafeBytes {
            dp.push($0, arrivalMicros: 1, truncated: false) { _ in }
        }
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 9)
        for (i, au) in aus.prefix(6).enumerated() {
            let bytes = i % 2 == 0 ? LiveSender.stamped(au, codec: .h264, captureMicros: 42) : au
            for p in packetizer.packetize(Self.units(bytes), timestamp90kHz: UInt32(i * 3000)) {
                p.withUnsafeBytes {
                    dp.push($0, arrivalMicros: UInt64(i + 2), truncated: false) { e in
                        switch e {
                        case .unit(let u): stage.push(u, codecHint: .h264) { if case .accessUnit(let a, _) = $0 { out.append(a) } }
                        case .captureTime(let w, let s): stage.noteCaptureTime(wallMicros: w, source: s)
                        case .accessUnitEnd(let r, let at, let m): stage.end(by: r, atMicros: at, minimumSlices: m) { if case .accessUnit(let a, _) = $0 { out.append(a) } }
                        default: break
                        }
                    }
                }
            }
        }
        #expect(out.count == 6)
        for (i, a) in out.enumerated() {
            if i % 2 == 0 {
                #expect(a.captureSource == .sei && a.captureWallMicros == 42)
            } else {
                #expect(a.captureSource == .rtcp && a.captureWallMicros.map { abs(Int64($0) - Int64(unix) - Int64(i) * 100_000 / 3) <= 1 } == true,
                        "frame \(i): \(String(describing: a.captureWallMicros))")
            }
        }
    }
}

/// A UDP socket on 127.0.0.1 standing in for a sender's RTCP port: sends sender reports, reads
/// the receiver reports that come back.
final class RTCPPeer {
    let fd: Int32
    let port: UInt16

    /// - Parameter host: the loopback address to send from.
    init(host: String = "127.0.0.1") throws {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr(host)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(rc == 0)
        fd = s
        port = try #require(Socket.localPort(s))
    }

    deinit { close(fd) }

    func send(_ d: [UInt8], to port: UInt16) {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { ap in
            ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                d.withUnsafeBytes { sendto(fd, $0.baseAddress, d.count, 0, sa, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    /// The next datagram, waiting up to `timeoutSeconds`; nil when none came.
    func receive(timeoutSeconds: Double) -> [UInt8]? {
        guard waitReadable(fd, timeoutMicros: Int(timeoutSeconds * 1e6)) else { return nil }
        var b = [UInt8](repeating: 0, count: 2048)
        let n = b.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(b.prefix(n)) : nil
    }
}

/// RTCP over real sockets: RTP to a UDP port, sender reports to port + 1 from a peer socket.
@Suite(.serialized) struct RTCPSocketTests {
    /// A raw Annex B feed never takes port + 1, though its bytes look like an RTP header now and
    /// then: the neighbouring port stays free for the next feed of a wall.
    @Test func aRawFeedLeavesTheNextPortFree() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let bytes = try Fixtures.bytes(path)
        let source = try Sender.rtpSource()
        let port = source.boundPort
        var o = Harness.liveOptions(frames: 1_000, idleFlushMicros: 1_000)
        o.maxFrames = nil
        o.timeoutSeconds = 2
        let h = Harness(source: source, options: o)
        h.start()
        // 1400-byte datagrams cut anywhere: many begin with bytes that read as RTP version 2.
        let datagrams = stride(from: 0, to: bytes.count, by: 1400).map { Array(bytes[$0..<min(bytes.count, $0 + 1400)]) }
        #expect(datagrams.contains { $0[0] & 0xC0 == 0x80 }, "some datagrams look like RTP")
        Sender.udp(port: port, datagrams: datagrams, pauseMicros: { _ in 500 })
        #expect(h.waitForFrames(30), "the raw stream plays")
        #expect(!Fixtures.udpPortIsBound(port + 1), "port + 1 is free")
        _ = h.finish()
    }

    /// An RTP packet (or any non-RTCP datagram) sent to the RTCP port never reaches the media
    /// path: no sender restart, no lost picture; it is counted as malformed RTCP.
    @Test func rtpSentToTheRTCPPortIsDroppedAndCounted() throws {
        let (h, port, packets, expected) = try startRTPFeed()
        Sender.udp(port: port, datagrams: packets[0])
        try #require(Wait.until { Fixtures.udpPortIsBound(port + 1) }, "the RTCP port is bound once RTP comes")
        let intruder = RTPPacket.build(marker: true, payloadType: 96, sequenceNumber: 1234, timestamp: 1, ssrc: 0xDEAD_BEEF,
                                       payload: [0x41, 0x9A, 0x00, 0x01])
        Sender.udp(port: port + 1, datagrams: [intruder, [UInt8](repeating: 0xFF, count: 40)])
        try #require(Wait.until { h.pipeline.metrics.count(.malformedRTCP) == 2 }, "both counted")
        Sender.paced(packets.dropFirst(), everyMicros: 500) { p in Sender.udp(port: port, datagrams: p) }
        let r = h.finish()
        #expect(r.summary.ssrcChanges == 0 && r.summary.resets == 0, "no restart")
        #expect(r.hashes == expected)
    }

    /// A live RTP feed on a fresh port (h264-aud, SSRC 0x5151, 90 kHz stamps 3000 apart), its
    /// packets per picture (not sent yet) and ffmpeg's pictures of the clip.
    private func startRTPFeed() throws -> (Harness, UInt16, [[[UInt8]]], [Fixtures.FrameHash]) {
        let path = Fixtures.capture("test/h264-aud.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        let source = try Sender.rtpSource()
        let port = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: aus.count, idleFlushMicros: 0))
        h.start()
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 0x5151)
        let packets = aus.enumerated().map { i, au in packetizer.packetize(RTCPTests.units(au), timestamp90kHz: UInt32(i * 3000)) }
        return (h, port, packets, expected)
    }

    @Test func captureTimesFromASenderReportAndAReceiverReportBack() throws {
        let (h, port, packets, expected) = try startRTPFeed()
        // The first picture binds the RTCP port (port + 1); then the sender's report comes.
        Sender.udp(port: port, datagrams: packets[0])
        try #require(Wait.until { Fixtures.udpPortIsBound(port + 1) }, "the RTCP port is bound once RTP comes")
        let peer = try RTCPPeer()
        let unix: UInt64 = MonotonicClock.wallMicros() - 50_000
        let sr = RTCPTests.senderReport(ssrc: 0x5151, ntp: SenderClock.ntp(unixMicros: unix), rtp: 0)
        peer.send(sr, to: port + 1)
        try #require(Wait.until { h.pipeline.metrics.count(.senderReports) == 1 }, "the report reaches the depacketizer")
        Sender.paced(packets.dropFirst().dropLast(), everyMicros: 1_000, every: 4) { Sender.udp(port: port, datagrams: $0) }
        // Reports go out every 2 s from the first RTP packet on (the first after 0.5 s).
        let rr = peer.receive(timeoutSeconds: 10)
        Sender.udp(port: port, datagrams: packets[packets.count - 1])
        let r = h.finish()
        #expect(r.hashes == expected)
        for (t, au) in zip(r.timings, r.presentedAccessUnits) {
            // The first picture was sent before the report; it has a time only if the RTP layer
            // was still holding its packets (codec not yet known) when the report came.
            if au == 0 && t.captureWallMicros == 0 { continue }
            #expect(t.captureSource == .rtcp && abs(Int64(t.captureWallMicros) - Int64(unix) - Int64(au) * 100_000 / 3) <= 1, "access unit \(au)")
        }
        let report = try #require(rr, "a receiver report reached the sender's RTCP address")
        let parsed = try RTCPTests.parse(report)
        #expect(parsed.isEmpty && report[1] == RTCPPacket.receiverReportType)
        let lsr = UInt32(report[24]) << 24 | UInt32(report[25]) << 16 | UInt32(report[26]) << 8 | UInt32(report[27])
        #expect(lsr == RTCPPacket.SenderReport(ssrc: 0, ntpTimestamp: SenderClock.ntp(unixMicros: unix), rtpTimestamp: 0,
                                               packetCount: 0, octetCount: 0).compactNTP, "it echoes our sender report")
        #expect(report[8...11] == [0, 0, 0x51, 0x51], "about the stream's SSRC")
        #expect(r.summary.rtcpPacketsSent >= 1, "the reports sent back are counted")
    }

    /// Only a well-formed sender report says where the sender's RTCP is: a malformed packet or a
    /// lone receiver report from another socket of the same host takes no reports away from it
    /// (a bad-input run saw the replies and keyframe requests go to the stray socket).
    @Test func onlyASenderReportSaysWhereTheReportsGo() throws {
        let (h, port, packets, _) = try startRTPFeed()
        Sender.udp(port: port, datagrams: packets[0])
        try #require(Wait.until { Fixtures.udpPortIsBound(port + 1) }, "the RTCP port is bound once RTP comes")
        let peer = try RTCPPeer(), stray = try RTCPPeer()
        peer.send(RTCPTests.senderReport(ssrc: 0x5151, ntp: SenderClock.ntp(unixMicros: MonotonicClock.wallMicros()), rtp: 0), to: port + 1)
        try #require(Wait.until { h.pipeline.metrics.count(.senderReports) == 1 }, "the report reaches the depacketizer")
        stray.send([0x80, 201, 0, 200, 1, 2, 3, 4], to: port + 1)   // a length that runs past the end
        stray.send([0x80, 201, 0, 1, 0, 0, 0, 9], to: port + 1)     // a receiver report with no blocks
        try #require(Wait.until { h.pipeline.metrics.count(.rtcpPackets) >= 3 }, "both reached the session")
        Sender.paced(packets.dropFirst().dropLast(), everyMicros: 1_000, every: 4) { Sender.udp(port: port, datagrams: $0) }
        // The feed waits for its last picture while the next report (2 s on) goes out.
        let report = peer.receive(timeoutSeconds: 10)
        Sender.udp(port: port, datagrams: packets[packets.count - 1])
        _ = h.finish()
        #expect(report?[1] == RTCPPacket.receiverReportType, "the sender got its receiver report")
        #expect(stray.receive(timeoutSeconds: 0) == nil, "the stray socket got nothing")
    }

    /// `--allow-from` applies to RTCP too: a sender report from elsewhere sets no clock.
    @Test func senderReportsFromARefusedAddressAreDropped() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")))
        let source = try Sender.rtpSource(allowFrom: [try #require(AddressPrefix("127.0.0.1/32"))])
        let port = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 2, idleFlushMicros: 0))
        h.start()
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 0x5151)
        Sender.udp(port: port, datagrams: packetizer.packetize(RTCPTests.units(aus[0]), timestamp90kHz: 0))
        try #require(Wait.until { Fixtures.udpPortIsBound(port + 1) }, "the RTCP port is bound once RTP comes")
        let sr = RTCPTests.senderReport(ssrc: 0x5151, ntp: SenderClock.ntp(unixMicros: MonotonicClock.wallMicros()), rtp: 0)
        try RTCPPeer(host: "127.0.0.2").send(sr, to: port + 1)
        try RTCPPeer(host: "127.0.0.1").send(sr, to: port + 1)
        try #require(Wait.until { h.pipeline.metrics.count(.rtcpPackets) >= 1 }, "the allowed report arrives")
        Sender.udp(port: port, datagrams: packetizer.packetize(RTCPTests.units(aus[1]), timestamp90kHz: 3000))
        _ = h.finish()
        #expect(h.pipeline.metrics.count(.rtcpPackets) == 1, "only the allowed sender's report was taken")
    }

    /// Without --allow-from, RTCP is taken only from the RTP sender's host: a stranger's forged
    /// sender reports set no clock (they moved glass-to-glass from 2.5 to 500 ms) and do not
    /// decide where the receiver reports go.
    @Test func senderReportsFromAnotherHostThanTheRTPSendersAreDropped() throws {
        let aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")))
        let source = try Sender.rtpSource()
        let port = source.boundPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: 2, idleFlushMicros: 0))
        h.start()
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 0x5151)
        Sender.udp(port: port, datagrams: packetizer.packetize(RTCPTests.units(aus[0]), timestamp90kHz: 0))   // from 127.0.0.1
        try #require(Wait.until { Fixtures.udpPortIsBound(port + 1) }, "the RTCP port is bound once RTP comes")
        let sr = RTCPTests.senderReport(ssrc: 0x5151, ntp: SenderClock.ntp(unixMicros: MonotonicClock.wallMicros()), rtp: 0)
        try RTCPPeer(host: "127.0.0.2").send(sr, to: port + 1)
        try RTCPPeer(host: "127.0.0.1").send(sr, to: port + 1)
        try #require(Wait.until { h.pipeline.metrics.count(.rtcpPackets) >= 1 }, "the RTP sender's report arrives")
        Sender.udp(port: port, datagrams: packetizer.packetize(RTCPTests.units(aus[1]), timestamp90kHz: 3000))
        let r = h.finish()
        #expect(h.pipeline.metrics.count(.rtcpPackets) == 1, "only the RTP sender's host's report was taken")
        #expect(r.summary.otherSenderDatagrams >= 1, "the stranger's was dropped and counted")
    }
}
