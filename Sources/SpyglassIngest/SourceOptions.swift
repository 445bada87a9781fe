/// What opening a source needs to know (``openSource(_:options:retryFirstConnection:)``): the
/// UDP receive buffer (`--udp-buffer-kb`), the senders accepted (`--allow-from`), whether a
/// packet capture plays as recorded or as fast as it can (`--untimed`), and how RTP comes from
/// an RTSP server (`--rtsp-transport`), and whether the stream is declared RTP.
///
/// A value the feed derives from its options (`ReceiverOptions.source`).
public struct SourceOptions: Sendable {
    /// UDP receive buffer to ask the kernel for, bytes (8 MiB).
    public var udpReceiveBufferBytes = 8 << 20
    /// Senders accepted; empty = everyone.
    public var allowFrom: [AddressPrefix] = []
    /// A packet capture plays as fast as it can, not at its recorded pace.
    public var untimed = false
    /// How RTP comes from an RTSP server.
    public var rtspTransport: RTSPTransport = .auto
    /// The stream is declared RTP (`--rtp`, `--sdp`): a UDP source binds its RTCP port (port + 1)
    /// at the first datagram rather than after two RTP packets, so the sender report a sender
    /// writes with its first picture is not lost (and with it a second of keyframe requests sent
    /// nowhere). Not at open: port + 1 may be the next feed's.
    public var rtpDeclared = false

    public init() {}
}
