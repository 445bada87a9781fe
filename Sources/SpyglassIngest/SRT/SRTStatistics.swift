import CSRT

/// SRT's own view of one connection (libsrt `srt_bistats`, totals since it opened): what the
/// feed summary and `/metrics` report beside our counts.
public struct SRTStatistics: Equatable, Sendable, Codable {
    /// Smoothed round-trip time, ms (`msRTT`).
    public var roundTripMillis = 0.0
    /// The latency both ends agreed on, ms (`msRcvTsbPdDelay`: the larger of the two proposals).
    public var latencyMillis = 0
    /// Data packets received (`pktRecvTotal`) and sent (`pktSentTotal`, retransmissions included).
    public var packetsReceived = 0
    public var packetsSent = 0
    /// Packets the receiver found missing (`pktRcvLossTotal`); most come back as retransmissions.
    public var packetsLost = 0
    /// Retransmitted packets received (`pktRcvRetrans`) and sent (`pktRetransTotal`).
    public var packetsRetransmittedReceived = 0
    public var packetsRetransmittedSent = 0
    /// Packets given up on: too late to play at the receiver (`pktRcvDropTotal`), too late to
    /// send at the sender (`pktSndDropTotal`). A receiver's drops are loss: their bytes never come.
    public var packetsDroppedReceiving = 0
    public var packetsDroppedSending = 0
    /// Sender: packets sent and not yet acknowledged (`pktSndBuf`), and the latency the
    /// receiver plays them out with, ms (`msSndTsbPdDelay`).
    public var packetsUnacknowledged = 0
    public var peerLatencyMillis = 0
    /// Packets that could not be decrypted (`pktRcvUndecryptTotal`): a key mismatch.
    public var packetsUndecrypted = 0

    /// All zero (no connection yet).
    public init() {}

    /// From libsrt's structure.
    init(_ s: SRT_TRACEBSTATS) {
        roundTripMillis = s.msRTT
        latencyMillis = Int(s.msRcvTsbPdDelay)
        packetsReceived = Int(s.pktRecvTotal)
        packetsSent = Int(s.pktSentTotal)
        packetsLost = Int(s.pktRcvLossTotal)
        packetsRetransmittedReceived = Int(s.pktRcvRetrans)
        packetsRetransmittedSent = Int(s.pktRetransTotal)
        packetsDroppedReceiving = Int(s.pktRcvDropTotal)
        packetsDroppedSending = Int(s.pktSndDropTotal)
        packetsUndecrypted = Int(s.pktRcvUndecryptTotal)
        packetsUnacknowledged = Int(s.pktSndBuf)
        peerLatencyMillis = Int(s.msSndTsbPdDelay)
    }

    /// The totals of two connections one after the other (a reconnect): counts add, the RTT and
    /// latency are the newer connection's.
    public static func + (past: SRTStatistics, now: SRTStatistics) -> SRTStatistics {
        var s = now
        s.packetsReceived += past.packetsReceived
        s.packetsSent += past.packetsSent
        s.packetsLost += past.packetsLost
        s.packetsRetransmittedReceived += past.packetsRetransmittedReceived
        s.packetsRetransmittedSent += past.packetsRetransmittedSent
        s.packetsDroppedReceiving += past.packetsDroppedReceiving
        s.packetsDroppedSending += past.packetsDroppedSending
        s.packetsUndecrypted += past.packetsUndecrypted
        return s
    }
}
