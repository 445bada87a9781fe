import SpyglassFeed
/// The `s` overlay: the link's counters since the start, as a person watching a link wants them
/// on screen (from the feed's ``FeedSummary``; one name per counter, as the summary prints them).
public enum LinkStatistics {
    /// The counters a person watching a link wants on screen (`s` toggles them).
    public static func lines(_ s: FeedSummary) -> [String] {
        var lines = ["\(s.format ?? s.codec ?? "") · \(s.framesDecoded) decoded, \(s.framesDropped) dropped · decode p50 \(s.decodeMillisP50.map { String(format: "%.1f ms", $0) } ?? "–")"]
        if s.rtp {
            lines.append("RTP: \(s.datagramsLost) lost, \(s.datagramsReordered) reordered, \(s.datagramsDuplicated) duplicated"
                         + (s.ssrcChanges > 0 ? " · SSRC changes \(s.ssrcChanges)\(s.ssrcChanges > 1 ? " (several senders on this port?)" : "")" : "")
                         + (s.strayPackets > 0 ? " · another sender's packets dropped \(s.strayPackets)" : ""))
        }
        if let k = s.keyframeText { lines.append(k) }
        lines.append("damaged AUs \(s.damagedAccessUnits) · on damaged refs \(s.framesWithDamagedReferences) · concealed \(s.concealedFrames) · decode errors \(s.decodeErrors) · resets \(s.resets)")
        if s.tsPackets > 0 { lines.append("MPEG-TS: \(s.tsContinuityErrors) continuity errors, \(s.tsPacketsDropped) packets dropped") }
        if let l = s.srt { lines.append(FeedSummary.srtText(l)) }
        if let c = s.captureClock { lines.append("capture clock: \(c)") }
        if let c = s.captureSource { lines.append("capture time from: \(c)") }
        if let p = s.platform { lines.append("platform (KLV): \(p)") }
        if s.picturesSplit + s.prematureIdleFlushes > 0 {
            lines.append("raw stream guesses: \(s.prematureIdleFlushes) NAL units cut (\(s.repairs) repaired), \(s.picturesSplit) pictures split")
        }
        var refused: [String] = []
        if s.disallowed > 0 { refused.append("\(s.disallowed) disallowed") }
        if s.otherSenderDatagrams > 0 { refused.append("\(s.otherSenderDatagrams) from another sender") }
        if s.framingChanges > 0 { refused.append("framing changes \(s.framingChanges)") }
        if s.garbageRuns > 0 { refused.append("garbage runs \(s.garbageRuns)") }
        if s.truncatedDatagrams > 0 { refused.append("\(s.truncatedDatagrams) truncated") }
        if s.oversizeNALUnits + s.oversizeAccessUnits > 0 { refused.append("\(s.oversizeNALUnits + s.oversizeAccessUnits) oversize") }
        if s.emptyDatagrams > 0 { refused.append("\(s.emptyDatagrams) empty") }
        if !refused.isEmpty { lines.append(refused.joined(separator: " · ")) }
        return lines
    }
}
