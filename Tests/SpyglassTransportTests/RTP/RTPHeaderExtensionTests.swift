import Testing
@testable import SpyglassTransport

/// RTP header extensions (RFC 8285) and the capture times they carry (RFC 6051 NTP-64, WebRTC
/// abs-capture-time).
@Suite struct RTPHeaderExtensionTests {
    /// 2026-12-04 12:00:00.250000 UTC as 64-bit NTP: seconds since 1900, then 2^32 × 0.25.
    static let unixSeconds: UInt64 = 1_796_385_600
    static let ntp: [UInt8] = {
        let v = (unixSeconds + 2_208_988_800) << 32 | (1 << 30)
        return (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) }
    }()
    static let micros = unixSeconds * 1_000_000 + 250_000

    /// An RTP packet (sequence 1, timestamp 0) whose header extension is `profile` and `data`
    /// (padded to 32-bit words).
    static func packet(profile: UInt16, data: [UInt8]) -> [UInt8] {
        var d = data
        while d.count % 4 != 0 { d.append(0) }
        return [0x90, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, UInt8(profile >> 8), UInt8(profile & 0xFF),
                0, UInt8(d.count / 4)] + d + [0x65, 0x88]
    }

    @Test func oneByteFormAsGStreamerWritesIt() throws {
        // bede0003 17 <8 bytes>: id 1, length 8 (written as 7), then padding.
        let p = try RTPPacket(datagram: Self.packet(profile: 0xBEDE, data: [0x17] + Self.ntp)[...])
        let ext = try #require(p.headerExtension)
        #expect(Array(ext.element(id: 1) ?? []) == Self.ntp)
        #expect(ext.element(id: 2) == nil)
        #expect(Array(p.payload) == [0x65, 0x88], "the payload starts after the extension")
        let x = try #require(CaptureTimeExtension(argument: "1=ntp-64"))
        #expect(x.captureWallMicros(in: ext) == Self.micros)
    }

    @Test func twoByteFormWithPaddingAndOtherElements() throws {
        // profile 0x1000; padding byte; id 5 (2 bytes); id 9 (abs-capture-time: 16 bytes).
        let data: [UInt8] = [0, 5, 2, 0xAA, 0xBB, 9, 16] + Self.ntp + [UInt8](repeating: 0xEE, count: 8)
        let ext = try #require(try RTPPacket(datagram: Self.packet(profile: 0x1000, data: data)[...]).headerExtension)
        #expect(Array(ext.element(id: 5) ?? []) == [0xAA, 0xBB])
        let x = try #require(CaptureTimeExtension(argument: "9=http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"))
        #expect(x.kind == .absCaptureTime && x.captureWallMicros(in: ext) == Self.micros)
    }

    @Test func malformedOrEmptyElementsGiveNoTime() throws {
        let x = try #require(CaptureTimeExtension(argument: "1=ntp-64"))
        // An element that claims 8 bytes where 4 are left: nothing of the extension is trusted.
        let cut = RTPHeaderExtension(profile: 0xBEDE, data: [0x17, 1, 2, 3][...])
        #expect(cut.element(id: 1) == nil && x.captureWallMicros(in: cut) == nil)
        // GStreamer writes zeros when it had no NTP time for the buffer.
        let zero = RTPHeaderExtension(profile: 0xBEDE, data: ([0x17] + [UInt8](repeating: 0, count: 8) + [0, 0, 0])[...])
        #expect(x.captureWallMicros(in: zero) == nil)
        // Id 15 ends the one-byte walk; a profile RFC 8285 does not define is not read.
        let stopped = RTPHeaderExtension(profile: 0xBEDE, data: ([0xF0, 0x17] + Self.ntp + [0, 0, 0])[...])
        #expect(stopped.element(id: 1) == nil)
        #expect(RTPHeaderExtension(profile: 0xABAC, data: ([0x17] + Self.ntp + [0, 0, 0])[...]).element(id: 1) == nil)
        // An extension longer than the datagram is a parse error, as before.
        var long = Self.packet(profile: 0xBEDE, data: [0x17] + Self.ntp)
        long[15] = 40
        #expect(throws: RTPPacket.ParseError.badExtension) { try RTPPacket(datagram: long[...]) }
    }

    /// NTP's era 1 starts on 2036-02-07 06:28:16 UTC (the 32-bit seconds wrap; RFC 4330 §3): a
    /// sender's clock past it is still read, not taken for a time before 1970.
    @Test func aTimeAfterTheNTPWrapOf2036() throws {
        let x = try #require(CaptureTimeExtension(argument: "1=ntp-64"))
        let seconds: UInt64 = 12                                            // era 1, second 12
        let ntp = (0..<8).map { UInt8(truncatingIfNeeded: (seconds << 32) >> (56 - 8 * UInt64($0))) }
        let ext = RTPHeaderExtension(profile: 0xBEDE, data: ([0x17] + ntp + [0, 0, 0])[...])
        #expect(x.captureWallMicros(in: ext) == (2_085_978_496 + 12) * 1_000_000, "2036-02-07 06:28:28 UTC")
        #expect(SenderClock.unixMicros(ntp: seconds << 32) == (2_085_978_496 + 12) * 1_000_000, "RTCP's sender clock too")
    }

    @Test func theSDPsExtmapNamesTheId() {
        let sdp = SessionDescription(text: """
            v=0
            m=video 5600 RTP/AVP 96
            a=rtpmap:96 H264/90000
            a=extmap:3/sendonly http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time
            a=extmap:4 urn:ietf:params:rtp-hdrext:ntp-64
            a=extmap:5 urn:ietf:params:rtp-hdrext:sdes:mid
            """)
        #expect(sdp.captureTimeExtension == CaptureTimeExtension(kind: .ntp64, id: 4), "NTP-64 wins when both are offered")
        #expect(SessionDescription(text: "a=extmap:12 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time").captureTimeExtension
                == CaptureTimeExtension(kind: .absCaptureTime, id: 12))
        #expect(SessionDescription(text: "a=extmap:5 urn:ietf:params:rtp-hdrext:sdes:mid").captureTimeExtension == nil)
    }

    @Test func optionArguments() {
        #expect(CaptureTimeExtension(argument: "2=abs-capture-time")?.kind == .absCaptureTime)
        #expect(CaptureTimeExtension(argument: "urn:ietf:params:rtp-hdrext:ntp-64") == nil, "an id is needed")
        #expect(CaptureTimeExtension(argument: "0=ntp-64") == nil && CaptureTimeExtension(argument: "256=ntp-64") == nil)
        #expect(CaptureTimeExtension(argument: "3=urn:ietf:params:rtp-hdrext:sdes:mid") == nil)
    }
}
