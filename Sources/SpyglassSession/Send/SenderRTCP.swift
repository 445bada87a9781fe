#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassTransport
import SpyglassIngest
import SpyglassPipeline

/// The RTCP side of `spyglass send --rtp` over UDP, as a camera's: sender reports (RFC 3550
/// §6.4.1) to the destination's port + 1, from one socket of its own on the RTP socket's port
/// + 1, which also hears what the receiver sends back there (symmetric RTP, RFC 4961): receiver
/// reports (for the round trip) and keyframe requests, PLI (RFC 4585 §6.3.1) and FIR (RFC 5104
/// §4.3.1).
///
/// A request is honoured with an IDR on the next picture, at most once per 2 × the round trip,
/// as GStreamer's rtpbin does, and at most ``maximumForcedPerSecond`` a second (a flood of
/// requests must not make every picture an IDR). A receiver whose answer IDR lost a packet asks
/// again at once, and is answered on the next picture. On the sender's thread only.
final class SenderRTCP {
    private let fd: Int32
    private let destination: [UInt8]
    private var nextReportMicros: UInt64 = 0
    private var lastForcedMicros: UInt64?
    /// A keyframe request came since the last picture.
    private var asked = false
    /// Where RTCP from the receiver is read into.
    private var buffer = [UInt8](repeating: 0, count: 1500)
    /// The latest round trip from a receiver report's LSR/DLSR, µs (nil before one).
    private(set) var roundTripMicros: UInt64?
    /// Keyframe requests (PLI or FIR) heard, and IDRs written for them.
    private(set) var requestsHeard = 0, keyframesForced = 0
    /// Time between sender reports, µs.
    static let intervalMicros: UInt64 = 1_000_000
    /// IDRs written for requests in any one second, at most (the receivers' own cap on requests).
    static let maximumForcedPerSecond = 5
    /// When the IDRs of the last second were forced, monotonic µs.
    private var recentForced: [UInt64] = []

    /// - Parameters:
    ///   - rtpDestination: the RTP destination's sockaddr bytes (its port + 1 gets the reports).
    ///   - bindRTP: binds the RTP socket to a local port, false when it is taken.
    /// - Returns: nil when no socket could be opened (the stream goes on without RTCP).
    init?(rtpDestination: [UInt8], bindRTP: (UInt16) -> Bool) {
        guard rtpDestination.count >= MemoryLayout<sockaddr_in>.size else { return nil }
        var d = rtpDestination
        let family = Int32(d.withUnsafeBytes { $0.load(as: sockaddr.self).sa_family })
        d.withUnsafeMutableBytes { b in
            // sin_port and sin6_port sit at the same offset (2), in network order.
            let port = UInt16(bigEndian: b.load(fromByteOffset: 2, as: UInt16.self))
            b.storeBytes(of: (port &+ 1).bigEndian, toByteOffset: 2, as: UInt16.self)
        }
        guard let s = Self.pairedSocket(family: family, bindRTP: bindRTP) ?? Optional(Socket.open(family: family, type: Socket.datagram)),
              s >= 0 else { return nil }
        fd = s
        destination = d
    }

    /// An RTCP socket on an odd port whose even neighbour below it the RTP socket takes (RFC 3550
    /// §11): a receiver that has not yet heard a sender report sends its first keyframe request
    /// to the RTP source's port + 1, and a join is answered at once. Nil when no pair was free
    /// in 32 tries (the reports then go from a port of the kernel's choice).
    private static func pairedSocket(family: Int32, bindRTP: (UInt16) -> Bool) -> Int32? {
        for _ in 0..<32 {
            let s = Socket.open(family: family, type: Socket.datagram)
            guard s >= 0 else { return nil }
            let rtcpPort = UInt16.random(in: 16_384...32_767) * 2 + 1
            if Socket.bindLocal(s, family: family, port: rtcpPort) {
                if bindRTP(rtcpPort - 1) { return s }
            }
            Glibc.close(s)
        }
        return nil
    }

    deinit { Glibc.close(fd) }

    /// Sends a sender report with SDES CNAME when one is due (every ``intervalMicros``).
    /// - Parameters:
    ///   - ssrc: the RTP stream's SSRC.
    ///   - packets, octets: RTP packets and payload octets sent so far.
    ///   - nowMicros: monotonic now; `wallMicros`: the wall clock now, µs since the Unix epoch,
    ///     which is also the RTP timestamp's clock (90 kHz ticks of it).
    func reportIfDue(ssrc: UInt32, packets: Int, octets: Int, nowMicros: UInt64, wallMicros: UInt64) {
        guard nowMicros >= nextReportMicros else { return }
        nextReportMicros = nowMicros + Self.intervalMicros
        let ntp = Self.ntp(wallMicros: wallMicros)
        let rtp = UInt32(truncatingIfNeeded: wallMicros * 9 / 100)
        var out: [UInt8] = [0x80, RTCPPacket.senderReportType, 0, 6]
        for w in [ssrc, UInt32(ntp >> 32), UInt32(ntp & 0xFFFF_FFFF), rtp, UInt32(truncatingIfNeeded: packets), UInt32(truncatingIfNeeded: octets)] {
            out += RTCPPacket.bigEndian(w)
        }
        out += RTCPPacket.sourceDescription(ssrc: ssrc, cname: "spyglass-send")
        _ = destination.withUnsafeBytes { d in
            out.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), d.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(d.count)) }
        }
    }

    /// Sleeps until `dueMicros` (monotonic µs), reading what the receiver sends back as it comes:
    /// a receiver report read on arrival gives the true round trip. Read once per picture
    /// instead, each one waited up to a picture (31 ms at 30 fps, every time, since receivers
    /// answer the packets they just got), and 2 × that refused the IDR a receiver asked for again
    /// when the first one was hit by the same loss.
    func wait(untilMicros dueMicros: UInt64) {
        while true {
            let now = MonotonicClock.nowMicros()
            guard now < dueMicros else { return }
            if spy_wait_readable(fd, Int(dueMicros - now)) > 0 { readBack(wallMicros: MonotonicClock.wallMicros()) }
        }
    }

    /// Reads what the receiver sent back (without waiting): notes keyframe requests and round
    /// trips. At most 64 datagrams a call, so that a flood cannot hold the next picture back.
    private func readBack(wallMicros: UInt64) {
        for _ in 0..<64 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { break }
            let packet = Array(buffer.prefix(n))
            guard let parts = try? packet.withUnsafeBytes({ try RTCPPacket.parts(of: $0) }) else { continue }
            for part in parts {
                if case .feedback(206, let format) = part, format == 1 || format == 4 { asked = true; requestsHeard += 1 }
            }
            noteRoundTrip(packet, wallMicros: wallMicros)
        }
    }

    /// Whether the next picture should be an IDR: a keyframe was asked for since the last
    /// picture, and the limits allow one.
    func keyframeWanted(nowMicros: UInt64, wallMicros: UInt64) -> Bool {
        readBack(wallMicros: wallMicros)
        guard asked else { return false }
        asked = false
        if let last = lastForcedMicros, nowMicros < last + 2 * (roundTripMicros ?? 0) { return false }
        recentForced.removeAll { $0 + 1_000_000 <= nowMicros }
        guard recentForced.count < Self.maximumForcedPerSecond else { return false }
        recentForced.append(nowMicros)
        lastForcedMicros = nowMicros
        keyframesForced += 1
        return true
    }

    /// The round trip from the first receiver report block that echoes a sender report
    /// (RFC 3550 §6.4.1: A − LSR − DLSR, in 1/65536 s).
    private func noteRoundTrip(_ p: [UInt8], wallMicros: UInt64) {
        var offset = 0
        while offset + 8 <= p.count {
            let length = 4 * ((Int(p[offset + 2]) << 8 | Int(p[offset + 3])) + 1)
            if p[offset + 1] == RTCPPacket.receiverReportType, p[offset] & 0x1F >= 1, offset + 32 <= p.count {
                let word = { (at: Int) in UInt32(p[at]) << 24 | UInt32(p[at + 1]) << 16 | UInt32(p[at + 2]) << 8 | UInt32(p[at + 3]) }
                let lsr = word(offset + 24), dlsr = word(offset + 28)
                if lsr != 0 {
                    let a = UInt32(truncatingIfNeeded: Self.ntp(wallMicros: wallMicros) >> 16)
                    let rtt = a &- lsr &- dlsr
                    if rtt < 65_536 { roundTripMicros = UInt64(rtt) * 1_000_000 / 65_536 }   // under 1 s: plausible
                }
                return
            }
            offset += max(4, length)
        }
    }

    /// NTP time (RFC 3550 §4: seconds since 1900 in the high 32 bits) of a Unix time in µs.
    static func ntp(wallMicros: UInt64) -> UInt64 {
        let seconds = wallMicros / 1_000_000 + 2_208_988_800
        let fraction = (wallMicros % 1_000_000) << 32 / 1_000_000
        return seconds << 32 | fraction
    }
}
