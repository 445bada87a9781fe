import SpyglassPipeline
import SpyglassFeed
/// The line a stalled feed's overlay leads with: why no picture comes.
public enum StallReason {
    /// Why no picture comes: never "no data" while data arrives, and never "datagrams since the
    /// last picture" once none has come for the stall time (the last of a sender that exited).
    /// - Parameters:
    ///   - datagrams: datagrams (or reads) counted when the last picture was shown.
    ///   - silentMicros: µs since the last datagram (or read); `stallMicros`: the stall time, µs.
    public static func text(_ s: FeedSummary, since datagrams: Int, silentMicros: UInt64, stallMicros: UInt64,
                            state: PipelineState, label: String) -> String {
        if state == .reconnecting { return "sender disconnected" }
        if case .connecting(let why) = state { return "cannot reach \(label): \(why)" }
        let arrived = s.datagrams - datagrams
        guard arrived > 0, silentMicros < stallMicros else { return "no data from \(label)" }
        let notRTP = s.notRTP > 0 ? ", \(s.notRTP) not RTP" : ""
        return "\(arrived) datagrams since the last picture, none made one\(notRTP)"
    }
}
