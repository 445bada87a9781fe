/// Where a frame's capture time came from, and whether it is on our clock.
public enum CaptureSource: String, Sendable, Codable {
    /// No capture stamp.
    case none
    /// The sender's MISB ST 0604 stamp, taken as on our wall clock (synchronized clocks, or
    /// corrected by `--clock-offset-ms`).
    case sei
    /// The sender's stamp shifted so that the fastest frame seen had a zero sender+network time
    /// (`--clock-offset relative`): differences are true, absolute figures are not.
    case seiRelative = "sei-relative"
    /// The frame's RTP timestamp through the sender's latest RTCP sender report (RFC 3550
    /// §6.4.1): the sender's NTP wall clock, taken as ours (or corrected as for `sei`).
    case rtcp
    /// `rtcp` in relative mode.
    case rtcpRelative = "rtcp-relative"
    /// An RTP header extension's capture time: RFC 6051's NTP-64 or WebRTC's
    /// abs-capture-time (``CaptureTimeExtension``), taken as on our wall clock (or corrected as
    /// for `sei`).
    case rtpExtension = "rtp-ext"
    /// `rtp-ext` in relative mode.
    case rtpExtensionRelative = "rtp-ext-relative"
    /// The Precision Time Stamp of a KLV metadata packet (MISB ST 0601 tag 2).
    case klv
    /// `klv` in relative mode.
    case klvRelative = "klv-relative"
    /// The sender's stamp is on a clock that is not ours (a capture after its arrival, or
    /// implausibly long before it): no glass-to-glass figure is given.
    case clockOffset = "clock-offset"
}

extension CaptureSource {
    /// The stamp comes from an RTCP sender report: the RTP timestamp the sender gave the picture
    /// when it packetized it, after capture and encoding (GStreamer's payloaders, `spyglass send
    /// --rtp`), so glass-to-glass from it leaves out the encoder and reads low: a lower bound.
    public var isLowerBound: Bool { self == .rtcp || self == .rtcpRelative }

    /// The relative-mode name of a stamp's origin (`sei` → `sei-relative`).
    package var relative: CaptureSource {
        switch self {
        case .sei: return .seiRelative
        case .rtcp: return .rtcpRelative
        case .rtpExtension: return .rtpExtensionRelative
        case .klv: return .klvRelative
        default: return self
        }
    }
}
