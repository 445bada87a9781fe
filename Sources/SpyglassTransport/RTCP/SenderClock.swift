/// The sender's wall clock for its RTP timestamps, from its latest sender report
/// (RFC 3550 §6.4.1): an RTP timestamp `t` was sampled at
/// `ntp + (t - rtp) / clockRate`, with the difference taken modulo 2^32 (timestamps wrap).
public struct SenderClock: Sendable {
    /// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01) (RFC 868).
    public static let ntpToUnixSeconds: UInt64 = 2_208_988_800
    /// RTP clock rate, Hz: 90 kHz for H.264/H.265 video (RFC 6184 §8.2.1, RFC 7798 §7.1) and
    /// MPEG-TS (RFC 2250 §2).
    public let clockRate: Int64
    /// The latest sender report (nil until one came).
    public private(set) var latest: RTCPPacket.SenderReport?

    /// - Parameter clockRate: RTP ticks per second (default 90,000).
    public init(clockRate: Int64 = 90_000) { self.clockRate = clockRate }

    /// Takes a sender report; the newest one wins.
    public mutating func take(_ report: RTCPPacket.SenderReport) { latest = report }

    /// The wall-clock instant of an RTP timestamp of stream `ssrc`, µs since the Unix epoch, or
    /// nil when no sender report of that SSRC has come (or its NTP time is before 1970).
    public func wallMicros(rtpTimestamp: UInt32, ssrc: UInt32) -> UInt64? {
        guard let sr = latest, sr.ssrc == ssrc else { return nil }
        guard let base = Self.unixMicros(ntp: sr.ntpTimestamp) else { return nil }
        let ticks = Int64(Int32(bitPattern: rtpTimestamp &- sr.rtpTimestamp))
        let micros = Int64(base) + ticks * 1_000_000 / clockRate
        return micros > 0 ? UInt64(micros) : nil
    }

    /// An NTP timestamp (RFC 3550 §4) as µs since the Unix epoch; nil before 1970. A timestamp
    /// whose top bit is clear is in NTP era 1, from 2036-02-07 on (RFC 4330 §3).
    public static func unixMicros(ntp: UInt64) -> UInt64? {
        let seconds = eraSeconds(ntp)
        guard seconds >= ntpToUnixSeconds else { return nil }
        let fraction = ((ntp & 0xFFFF_FFFF) * 1_000_000) >> 32
        return (seconds - ntpToUnixSeconds) * 1_000_000 + fraction
    }

    /// The seconds of a 64-bit NTP timestamp since 1900, era 1 (top bit clear: 2036 to 2104)
    /// counted on from era 0's 2^32 (RFC 4330 §3).
    public static func eraSeconds(_ ntp: UInt64) -> UInt64 {
        let seconds = ntp >> 32
        return seconds & 0x8000_0000 == 0 ? seconds + (1 << 32) : seconds
    }

    /// µs since the Unix epoch as an NTP timestamp (for the receiver's own reports and tests).
    public static func ntp(unixMicros: UInt64) -> UInt64 {
        let seconds = unixMicros / 1_000_000 + ntpToUnixSeconds
        let fraction = ((unixMicros % 1_000_000) << 32) / 1_000_000
        return seconds << 32 | fraction
    }
}
