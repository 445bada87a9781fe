import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
/// Everything a run counted, for the summary line and `--summary FILE` (JSON).
public struct FeedSummary: Codable, Sendable {
    /// The source as named on the command line.
    public var source = ""
    /// Codec in use ("H.264", "H.265"), once known.
    public var codec: String?
    /// The latest SPS: size, chroma, bit depth, VUI frame rate.
    public var format: String?
    /// Datagrams (UDP) or reads (TCP, file, stdin) and their bytes.
    public var datagrams = 0
    /// Bytes received (datagram payloads, or bytes read).
    public var bytes = 0
    /// Zero-length datagrams, counted and dropped.
    public var emptyDatagrams = 0
    /// Datagrams cut by the read buffer (MSG_TRUNC); their access units are damaged.
    public var truncatedDatagrams = 0
    /// TCP connections made or accepted.
    public var connections = 0
    /// NAL units accepted by the assembler.
    public var nalUnits = 0
    /// Access units completed (each holds a picture).
    public var accessUnits = 0
    /// Bytes outside any NAL unit (before the first start code, or after a cut).
    public var junkBytes = 0
    /// Start codes with nothing after them.
    public var zeroLengthNALUnits = 0
    /// NAL units with a forbidden header, dropped.
    public var invalidNALUnits = 0
    /// NAL units over the size cap, dropped.
    public var oversizeNALUnits = 0
    /// Access units over `--max-au-mb`, dropped.
    public var oversizeAccessUnits = 0
    /// NAL units ended by an idle gap on a live input.
    public var idleFlushes = 0
    /// Idle flushes that cut a NAL unit (each raises the idle time for the rest of the run).
    public var prematureIdleFlushes = 0
    /// Access units ended early by a flush (idle gap or burst end) between two slices of one
    /// picture; the rest of the picture went on as a damaged fragment.
    public var picturesSplit = 0
    /// Pictures decoded from damaged references (after a damaged access unit, until a clean
    /// IDR/IRAP or a completed recovery point): shown as damaged.
    public var framesWithDamagedReferences = 0
    /// Trailing units that belonged to no picture, dropped.
    public var unitsWithoutPicture = 0
    /// Access units with lost or cut bytes (RTP loss, truncation).
    public var damagedAccessUnits = 0
    /// Parameter sets that did not parse.
    public var invalidParameterSets = 0
    /// SPS refused for a picture over `--max-size`.
    public var refusedPictureSize = 0
    /// Access units not decoded because their SPS was over the picture-size cap.
    public var refusedAccessUnits = 0
    /// Pictures libavcodec returned.
    public var framesDecoded = 0
    /// Pictures presented (window) or taken (headless).
    public var framesDisplayed = 0
    /// Pictures replaced before the display took them (newest wins), or hidden as damaged.
    public var framesDropped = 0
    /// Packets or frames libavcodec refused.
    public var decodeErrors = 0
    /// Pictures libavcodec returned with concealed damage.
    public var concealedFrames = 0
    /// One line per SPS change under the same id.
    public var parameterSetChanges: [String] = []
    /// RTP: whether the input was RTP, and what the RTP layer counted.
    public var rtp = false
    /// True for UDP (counts are datagrams), false for byte streams (counts are reads).
    public var isDatagramSource = false
    /// What ``datagrams`` counts when the source said (``ByteSource/countsAre``: "packets" for
    /// RTSP and packet captures); nil: datagrams or reads, by ``isDatagramSource``.
    public var countedAs: String?
    /// What ``datagrams`` counts: "datagrams", "packets" or "reads".
    public var countsAre: String { countedAs ?? (isDatagramSource ? "datagrams" : "reads") }
    public var rtpPackets = 0
    /// RTP sequence gaps (packets lost), late/out-of-order packets, duplicates.
    public var datagramsLost = 0
    public var datagramsReordered = 0
    public var datagramsDuplicated = 0
    /// RTP packets whose SSRC was not the one before (RFC 3550 §8.2): 1 for a sender that
    /// restarted, many for two senders (or one misbehaving) alternating on one port. Not
    /// counted as reordered, lost or duplicated.
    public var ssrcChanges = 0
    /// RTP packets of a second SSRC dropped while the established sender kept sending (RFC 3550
    /// §A.1 probation): a stray packet, or another sender on the same port.
    public var strayPackets = 0
    /// RTCP compound packets received (RFC 3550 §6), sender reports among them, and malformed
    /// ones dropped.
    public var rtcpPackets = 0
    public var senderReports = 0
    public var malformedRTCP = 0
    /// Pictures a replay decoded only on the way to a seek target (never shown).
    public var framesToSeekTarget = 0
    /// RTCP packets sent back to the sender (receiver reports, RFC 3550 §6.4.2).
    public var rtcpPacketsSent = 0
    /// KLV payloads dropped as malformed (bad BER length, bad checksum, too large).
    public var malformedKLV = 0
    /// Datagrams that were not RTP, or another payload type, on an RTP input.
    public var notRTP = 0
    /// NAL units lost or cut by missing RTP fragments.
    public var damagedNALUnits = 0
    /// RTP payloads whose structure was malformed or unsupported.
    public var malformedPayloads = 0
    /// Times the detected framing changed (RTP, Annex B, MPEG-TS), and runs of
    /// ``AutoDepacketizer/redecideAfter`` datagrams that fitted no framing and changed nothing.
    public var framingChanges = 0
    public var garbageRuns = 0
    /// Sender restarts followed (new SSRC, sequence reset, a new TCP sender).
    public var resets = 0
    /// Times the codec an SDP or `--codec` named was not the stream's (at most once per run:
    /// the first parameter set of the other codec).
    public var codecMismatches = 0
    /// TCP senders that went away.
    public var disconnects = 0
    /// Datagrams or connections refused by `--allow-from`.
    public var disallowed = 0
    /// Datagrams from another sender than the one the port listens to, dropped (a flood, a
    /// stray sender; ``Metric/otherSender``).
    public var otherSenderDatagrams = 0
    /// Times another sender took the port over, or the previous one took it back.
    public var senderTakeovers = 0
    /// Units or access units skipped while waiting for a random access point after a join.
    public var skippedBeforeRandomAccess = 0
    /// Median time libavcodec took per picture, ms (nil with no frames), from the decode histogram.
    public var decodeMillisP50: Double?
    /// Median time a picture was then held by libavcodec for output order (B-frames), ms; nil
    /// when no picture was held.
    public var reorderMillisP50: Double?
    /// Keyframe requests (RTCP PLI) sent for loss, for a cut fragment, for a join.
    public var keyframeRequestsLoss = 0, keyframeRequestsCut = 0, keyframeRequestsJoin = 0
    /// Recoveries (damage → the next random-access point) and their median, ms.
    public var recoveries = 0
    public var recoveryMillisP50: Double?
    /// The keyframe requests by reason and the recoveries, for the summary and the `s` overlay
    /// ("5 keyframe requests (loss 4, join 1), clean again 4 times after damage or a join, p50
    /// 34 ms"); nil when there were neither.
    public var keyframeText: String? {
        var parts: [String] = []
        let requests = keyframeRequestsLoss + keyframeRequestsCut + keyframeRequestsJoin
        if requests > 0 {
            let why = [("loss", keyframeRequestsLoss), ("cut", keyframeRequestsCut), ("join", keyframeRequestsJoin)]
                .filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
            parts.append("\(requests) keyframe request\(requests == 1 ? "" : "s") (\(why))")
        }
        if recoveries > 0, let p = recoveryMillisP50 {
            parts.append(String(format: "clean again %d time%@ after damage or a join, p50 %.0f ms", recoveries, recoveries == 1 ? "" : "s", p))
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
    /// MPEG-TS: packets read, continuity-counter gaps on the video PID (ISO/IEC 13818-1 §2.4.3.3),
    /// packets dropped (transport error indicator, scrambled, a broken PES header).
    public var tsPackets = 0
    public var tsContinuityErrors = 0
    public var tsPacketsDropped = 0
    /// The TS packet size, bytes (188, 192 or 204), when MPEG-TS came (``TSPacketSize``).
    public var tsPacketBytes: Int?
    /// SRT's own statistics of the link (RTT, latency, loss, retransmissions, drops), for an SRT
    /// source. Its drops are also in ``datagramsLost``.
    public var srt: SRTStatistics?
    /// Cut NAL units put back whole (their pictures decoded again), and those that could not be.
    public var repairs = 0
    public var repairsFailed = 0
    /// How the sender's capture stamps relate to our clock, when that is worth saying.
    public var captureClock: String?
    /// Where the last picture's capture time came from: `sei`, `rtcp`, `klv` (with `-relative`
    /// in relative mode), `clock-offset`, or `none`.
    public var captureSource: String?
    /// The platform's position and heading from the newest KLV local set, when the stream has one.
    public var platform: String?
    /// Length of the run, s.
    public var durationSeconds = 0.0

    public init() {}

    /// The summary of a feed from its registry.
    /// - Parameters:
    ///   - source: the source's label.
    ///   - datagramSource: counts are datagrams (UDP), not reads.
    ///   - countsAre: what one read is, when the source says (``ByteSource/countsAre``).
    ///   - snapshot: the feed's metrics.
    ///   - durationSeconds: how long the feed has run, s.
    public init(source: String, datagramSource: Bool, countsAre: String? = nil, snapshot m: MetricsRegistry.Snapshot,
                durationSeconds: Double) {
        self.source = source
        isDatagramSource = datagramSource
        countedAs = countsAre
        codec = m.codec
        format = m.format
        parameterSetChanges = m.parameterSetChanges
        rtp = m.transport.flatMap(Framing.init(rawValue:))?.isRTP == true
        captureClock = m.clockStatus
        captureSource = m.captureSource
        platform = m.platform
        srt = m.srt
        repairs = m[.repairs]; repairsFailed = m[.repairsFailed]
        tsPackets = m[.tsPackets]; tsContinuityErrors = m[.tsContinuityErrors]; tsPacketsDropped = m[.tsPacketsDropped]
        tsPacketBytes = m[.tsPacketsM2TS] > 0 ? 192 : m[.tsPacketsWithParity] > 0 ? 204 : tsPackets > 0 ? 188 : nil
        datagrams = m[.datagrams]; bytes = m[.bytes]; emptyDatagrams = m[.emptyDatagrams]
        truncatedDatagrams = m[.truncatedDatagrams]; connections = m[.connections]; disallowed = m[.disallowed]
        otherSenderDatagrams = m[.otherSender]; senderTakeovers = m[.senderTakeovers]
        framingChanges = m[.framingChanges]; garbageRuns = m[.garbageRuns]
        junkBytes = m[.junkBytes]; zeroLengthNALUnits = m[.zeroLengthNALUnits]; oversizeNALUnits = m[.oversizeNALUnits]
        idleFlushes = m[.idleFlushes]; prematureIdleFlushes = m[.cutNALUnits]; picturesSplit = m[.picturesSplit]
        rtpPackets = m[.rtpPackets]; notRTP = m[.notRTP]; datagramsLost = m[.packetsLost]
        datagramsReordered = m[.packetsReordered]; datagramsDuplicated = m[.packetsDuplicated]; ssrcChanges = m[.ssrcChanges]
        strayPackets = m[.strayPackets]
        damagedNALUnits = m[.damagedNALUnits]; malformedPayloads = m[.malformedPayloads]
        rtcpPackets = m[.rtcpPackets]; senderReports = m[.senderReports]; malformedRTCP = m[.malformedRTCP]
        rtcpPacketsSent = m[.rtcpPacketsSent]
        framesToSeekTarget = m[.framesToSeekTarget]
        malformedKLV = m[.malformedKLV]
        nalUnits = m[.nalUnits]; accessUnits = m[.accessUnits]; invalidNALUnits = m[.invalidNALUnits]
        oversizeAccessUnits = m[.oversizeAccessUnits]; unitsWithoutPicture = m[.unitsWithoutPicture]
        refusedAccessUnits = m[.refusedAccessUnits]; invalidParameterSets = m[.invalidParameterSets]
        refusedPictureSize = m[.refusedPictureSize]
        damagedAccessUnits = m[.damagedAccessUnits]; framesWithDamagedReferences = m[.framesOnDamagedReferences]
        skippedBeforeRandomAccess = m[.skippedBeforeJoin]
        framesDecoded = m[.framesDecoded]; decodeErrors = m[.decodeErrors]; concealedFrames = m[.concealedFrames]
        framesDisplayed = m[.framesShown]; framesDropped = m[.framesDropped]
        resets = m[.resets]; disconnects = m[.disconnects]; codecMismatches = m[.codecMismatches]
        decodeMillisP50 = m.stages[.decode]?.quantileMicros(0.5).map { $0 / 1000 }
        reorderMillisP50 = m.stages[.reorder]?.quantileMicros(0.5).map { $0 / 1000 }
        keyframeRequestsLoss = m[.keyframeRequestsLoss]
        keyframeRequestsCut = m[.keyframeRequestsCut]
        keyframeRequestsJoin = m[.keyframeRequestsJoin]
        recoveries = Int(m.stages[.recovery]?.count ?? 0)
        recoveryMillisP50 = m.stages[.recovery]?.quantileMicros(0.5).map { $0 / 1000 }
        self.durationSeconds = durationSeconds
    }

    /// The one-line human summary printed to stderr on exit.
    public var line: String { line(name: nil) }

    /// The summary line, led by the feed's `name=` (a wall file's) and its source.
    public func line(name: String?) -> String {
        let who = name.map { $0 == source ? source : "\($0) (\(source))" } ?? source
        var s = "spyglass: \(who): \(datagrams) \(countsAre), \(bytes) bytes"
        if emptyDatagrams > 0 { s += " (\(emptyDatagrams) empty)" }
        if truncatedDatagrams > 0 { s += " (\(truncatedDatagrams) truncated)" }
        s += "; \(nalUnits) NAL units, \(accessUnits) access units"
        s += "; \(framesDecoded) frames decoded" + (framesToSeekTarget > 0 ? " (\(framesToSeekTarget) only to reach a seek target)" : "")
            + ", \(framesDisplayed) displayed, \(framesDropped) dropped"
        s += "; \(decodeErrors) decode errors"
        if let d = decodeMillisP50 { s += String(format: "; decode p50 %.2f ms", d) }
        if let r = reorderMillisP50 { s += String(format: " (then held for B-frame order: p50 %.2f ms)", r) }
        var extra: [String] = []
        if tsPackets > 0 { extra.append("MPEG-TS: \(tsPackets) packets" + (tsPacketBytes.map { $0 != 188 ? " of \($0) bytes" : "" } ?? "") + ", \(tsContinuityErrors) continuity errors" + (tsPacketsDropped > 0 ? ", \(tsPacketsDropped) dropped" : "")) }
        if let l = srt { extra.append(Self.srtText(l)) }
        if rtp { extra.append("RTP: \(datagramsLost) lost, \(datagramsReordered) reordered, \(datagramsDuplicated) duplicated"
                              + (ssrcChanges > 0 ? ", \(ssrcChanges) SSRC changes" : "")
                              + (strayPackets > 0 ? ", \(strayPackets) packets of another sender dropped" : "")) }
        if let k = keyframeText { extra.append(k) }
        if rtcpPackets + malformedRTCP > 0 { extra.append("RTCP: \(senderReports) sender reports" + (malformedRTCP > 0 ? ", \(malformedRTCP) malformed" : "")
                                                         + (rtcpPacketsSent > 0 ? ", \(rtcpPacketsSent) sent back" : "")) }
        if malformedKLV > 0 { extra.append("\(malformedKLV) malformed KLV payloads dropped") }
        if notRTP > 0 { extra.append("\(notRTP) not RTP") }
        if damagedNALUnits > 0 { extra.append("\(damagedNALUnits) NAL units damaged by lost fragments") }
        if malformedPayloads > 0 { extra.append("\(malformedPayloads) malformed or unsupported RTP payloads") }
        if resets > 0 { extra.append("\(resets) resets") }
        if framingChanges > 0 { extra.append("\(framingChanges) framing changes") }
        if garbageRuns > 0 { extra.append("\(garbageRuns) runs of \(AutoDepacketizer.redecideAfter) datagrams that fitted no framing") }
        if codecMismatches > 0 { extra.append("the named codec was not the stream's") }
        if disconnects > 0 { extra.append("\(disconnects) disconnects") }
        if disallowed > 0 { extra.append("\(disallowed) from disallowed senders") }
        if otherSenderDatagrams > 0 { extra.append("\(otherSenderDatagrams) datagrams from another sender dropped") }
        if senderTakeovers > 0 { extra.append("the port changed senders \(senderTakeovers) times") }
        if skippedBeforeRandomAccess > 0 { extra.append("\(skippedBeforeRandomAccess) skipped before a random access point") }
        if concealedFrames > 0 { extra.append("\(concealedFrames) concealed") }
        if damagedAccessUnits > 0 { extra.append("\(damagedAccessUnits) damaged AUs") }
        if junkBytes > 0 { extra.append("\(junkBytes) junk bytes") }
        if prematureIdleFlushes > 0 { extra.append("\(prematureIdleFlushes) NAL unit\(prematureIdleFlushes == 1 ? "" : "s") cut by an idle flush") }
        if repairs + repairsFailed > 0 { extra.append("\(repairs) repaired" + (repairsFailed > 0 ? ", \(repairsFailed) could not be" : "")) }
        if picturesSplit > 0 { extra.append("\(picturesSplit) pictures split by a flush") }
        if framesWithDamagedReferences > 0 { extra.append("\(framesWithDamagedReferences) frames on damaged references") }
        if invalidNALUnits > 0 { extra.append("\(invalidNALUnits) invalid NAL units") }
        if oversizeNALUnits + oversizeAccessUnits > 0 { extra.append("\(oversizeNALUnits + oversizeAccessUnits) oversize") }
        if refusedPictureSize > 0 { extra.append("\(refusedPictureSize) SPS over the size cap, \(refusedAccessUnits) access units refused") }
        if let c = captureClock { extra.append("capture clock: \(c)") }
        if !extra.isEmpty { s += " (" + extra.joined(separator: ", ") + ")" }
        return s
    }

    /// SRT's statistics in one line for people: "SRT: RTT 0.12 ms, latency 20 ms, 3 lost,
    /// 3 retransmitted, 0 dropped" (packets; lost ones mostly come back retransmitted, dropped
    /// ones never do), and the undecryptable packets when there are any.
    public static func srtText(_ l: SRTStatistics) -> String {
        String(format: "SRT: RTT %.2f ms, latency %d ms, %d lost, %d retransmitted, %d dropped", l.roundTripMillis,
               l.latencyMillis, l.packetsLost, l.packetsRetransmittedReceived, l.packetsDroppedReceiving)
        + (l.packetsUndecrypted > 0 ? ", \(l.packetsUndecrypted) undecryptable" : "")
    }
}
