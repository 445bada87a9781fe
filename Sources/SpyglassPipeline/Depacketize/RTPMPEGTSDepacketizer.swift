/// MPEG-TS carried in RTP with the static payload type 33 (RFC 2250 §2; RFC 3551 Table 5), as
/// `ffmpeg -f rtp_mpegts` and broadcast encoders send it: the RTP layer (``SSRCProbation``,
/// ``SequenceTracker``) counts stray packets, loss, duplicates and restarts, and the payload, a
/// whole number of 188-byte TS packets, goes on into the ``MPEGTSDepacketizer`` (whose
/// continuity counters mark the damage). RTCP in band goes to the stream's ``RTCPSession``,
/// which makes the receiver reports (``DepacketizerEvent/toSender(_:)``).
import SpyglassBitstream
import SpyglassTransport
public struct RTPMPEGTSDepacketizer: Depacketizer {
    public var framing: Framing? { .rtpMPEGTS }
    /// RTP payload type of MPEG-2 transport streams (RFC 3551 §6, Table 5).
    public static let payloadType: UInt8 = 33
    private var ts: MPEGTSDepacketizer
    private var tracker = SequenceTracker()
    private var probation = SSRCProbation<(RTPPacket, UInt64, Bool)>()
    private var packets = 0
    private var notRTP = 0
    private var session = RTCPSession()

    /// The idle flush for TS in RTP, µs: at least 50 ms, a last resort only. RTP senders pace
    /// their packets (ffmpeg's `rtp_mpegts` spreads a picture's packets over milliseconds), and
    /// the PES rules (length, stuffing, next start) end pictures without waiting.
    /// - Parameter idle: the source's idle-flush time, µs (0: off).
    public static func idleFlushMicros(_ idle: Int) -> Int { idle > 0 ? max(idle, 50_000) : 0 }

    /// - Parameter ts: the demultiplexer the payloads go into.
    public init(ts: MPEGTSDepacketizer) { self.ts = ts }

    public var codec: VideoCodec? { ts.codec }

    /// True when a datagram is RTP (version 2) with payload type 33 whose payload starts with a
    /// TS sync byte (0x47).
    public static func looksLikeRTPMPEGTS(_ d: ArraySlice<UInt8>) -> Bool {
        guard d.count >= 12 + 188, d[d.startIndex] >> 6 == 2, d[d.startIndex + 1] & 0x7F == payloadType else { return false }
        let payload = d.startIndex + 12 + 4 * Int(d[d.startIndex] & 0x0F)
        return payload < d.endIndex && d[payload] == 0x47
    }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        if RTCPPacket.looksLikeRTCP(chunk) {
            session.receive(chunk, arrivalMicros: arrivalMicros)
            return
        }
        guard let p = try? RTPPacket(datagram: Array(chunk.bindMemory(to: UInt8.self))[...]), p.payloadType == Self.payloadType else {
            notRTP += 1
            return
        }
        packets += 1
        session.observeRTP(chunk, arrivalMicros: arrivalMicros)
        admitted(probation.admit((p, arrivalMicros, truncated), ssrc: p.ssrc, arrivalMicros: arrivalMicros), emit: emit)
        if let out = session.outgoing(nowMicros: arrivalMicros) { emit(.toSender(out.bytes, keyframeRequest: out.keyframeRequest)) }
    }

    /// Packets past the SSRC probation: sequence checks, then their TS packets.
    private mutating func admitted(_ list: [(RTPPacket, UInt64, Bool)], emit: (DepacketizerEvent) -> Void) {
        for (p, arrival, cut) in list {
            switch tracker.observe(ssrc: p.ssrc, sequenceNumber: p.sequenceNumber) {
            case .drop: continue
            case .restart: emit(.restart(reason: String(format: "sender restart (SSRC %08x, sequence %d)", p.ssrc, p.sequenceNumber)))
            case .accept(let gap): if gap > 0 { emit(.damage(lostPackets: gap)) }
            }
            p.payload.withUnsafeBytes { ts.push($0, arrivalMicros: arrival, truncated: cut, emit: emit) }
        }
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        min(ts.pollTimeoutMicros(default: pollMicros), probation.isHolding ? 10_000 : pollMicros)
    }
    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if let out = session.outgoing(nowMicros: nowMicros) { emit(.toSender(out.bytes, keyframeRequest: out.keyframeRequest)) }
        admitted(probation.tick(nowMicros: nowMicros), emit: emit)
        ts.tick(nowMicros: nowMicros, emit: emit)
    }
    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        probation.finish()
        ts.finish(nowMicros: nowMicros, emit: emit)
    }

    public var counts: [Metric: Int] {
        var c = ts.counts
        let s = tracker.counters
        c[.rtpPackets, default: 0] += packets
        c[.notRTP, default: 0] += notRTP
        c[.packetsLost, default: 0] += s.lost
        c[.packetsReordered, default: 0] += s.reordered
        c[.packetsDuplicated, default: 0] += s.duplicates
        c[.ssrcChanges, default: 0] += s.ssrcChanges
        c[.strayPackets, default: 0] += probation.strayPackets
        c[.rtcpPackets, default: 0] += session.counts.packets
        c[.senderReports, default: 0] += session.counts.senderReports
        c[.malformedRTCP, default: 0] += session.counts.malformed
        return c
    }
}
