import SpyglassTransport
/// The ingest formats Spyglass knows, and how one is chosen from the first chunk.
///
/// A new format registers here: a ``Framing`` case, a test on the first bytes of a datagram
/// source, and a factory.
public enum DepacketizerRegistry {
    /// One ingest format.
    public struct Format: Sendable {
        /// The framing it reads.
        public let framing: Framing
        /// True when the format can also come as a byte stream (TCP, a file, a pipe); else only
        /// datagrams are tested for it.
        public var onByteStreams = false
        /// True when the first chunk looks like this format.
        public let matches: @Sendable (_ first: ArraySlice<UInt8>, _ settings: DepacketizerSettings) -> Bool
        /// Builds the depacketizer.
        public let make: @Sendable (_ settings: DepacketizerSettings, _ datagrams: Bool, _ idleFlushMicros: Int) -> any Depacketizer
    }

    /// Formats tried in order on the first chunk; the last one (raw Annex B) takes anything.
    public static let formats: [Format] = [
        // Before MPEG-TS: an RTP header before TS packets is also TS cut at byte 12.
        Format(framing: .rtpMPEGTS,
               matches: { head, _ in RTPMPEGTSDepacketizer.looksLikeRTPMPEGTS(head) },
               make: { o, _, idle in
                   RTPMPEGTSDepacketizer(ts: MPEGTSDepacketizer(maxUnitBytes: o.maxUnitBytes,
                                                                idleFlushMicros: RTPMPEGTSDepacketizer.idleFlushMicros(idle),
                                                                program: o.mpegtsSelection.program, pid: o.mpegtsSelection.pid))
               }),
        Format(framing: .mpegTS, onByteStreams: true,
               // Whole packets, or (a receiver that joins mid-stream, ffmpeg's 1472-byte
               // datagrams) packets cut anywhere: sync bytes every 188 bytes from within the first 188.
               matches: { first, o in o.transport == .auto && first.withUnsafeBytes { AutoDepacketizer.looksLikeMPEGTS($0) || AutoDepacketizer.continuesMPEGTS($0) } },
               make: { o, _, idle in MPEGTSDepacketizer(maxUnitBytes: o.maxUnitBytes, idleFlushMicros: idle,
                                                               program: o.mpegtsSelection.program, pid: o.mpegtsSelection.pid) }),
        Format(framing: .rtp,
               matches: { head, o in o.transport == .rtp || (o.transport == .auto && RTPPacket.looksLikeRTP(head)) },
               make: { o, _, _ in RTPStreamDepacketizer(settings: o) }),
        Format(framing: .annexB,
               matches: { _, _ in true },
               make: { o, datagrams, idle in AnnexBDepacketizer(maxUnitBytes: o.maxUnitBytes, datagrams: datagrams, idleFlushMicros: idle) }),
    ]

    /// The format for a source's first chunk. On byte streams (TCP, files, pipes) only the
    /// formats marked ``Format/onByteStreams`` are tried; `--raw` means Annex B.
    public static func choose(first: ArraySlice<UInt8>, datagrams: Bool, settings: DepacketizerSettings) -> Format {
        let annexB = formats[formats.count - 1]
        guard settings.transport != .raw else { return annexB }
        return formats.first { ($0.onByteStreams || datagrams) && $0.matches(first, settings) } ?? annexB
    }
}
