/// How RTP comes from an RTSP server (RFC 2326 §12.39).
public enum RTSPTransport: String, Sendable {
    /// UDP unicast, falling back to TCP-interleaved when no packet arrives within a second
    /// (as ffmpeg does: firewalls and NAT often drop the server's UDP).
    case auto
    case udp
    /// `RTP/AVP/TCP;interleaved=0-1` on the control connection.
    case tcp
}
