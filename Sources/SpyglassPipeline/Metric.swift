/// Every counter a pipeline keeps. Counters only go up, for the whole run of a feed, across codec
/// switches, decoder swaps and sender restarts (the registry keeps what replaced stages counted).
///
/// The raw value is the base of the Prometheus name (`spyglass_<raw>_total`).
public enum Metric: String, CaseIterable, Sendable, Codable {
    // Source (UDP datagrams, or reads of a byte stream).
    case datagrams, bytes, emptyDatagrams = "empty_datagrams", truncatedDatagrams = "truncated_datagrams"
    case connections, disallowed
    /// UDP datagrams from another sender than the one the port listens to (``SenderLatch``):
    /// dropped before any parsing.
    case otherSender = "other_sender_datagrams"
    /// Times another sender took a UDP port over (the established one silent for 100 ms), or the
    /// one it took over from took it back (``SenderLatch``).
    case senderTakeovers = "sender_takeovers"
    /// Framing detection (``AutoDepacketizer``): times the framing changed (a sender that
    /// restarted with another one), and runs of datagrams that fitted no framing (garbage, a
    /// flood) and changed nothing.
    case framingChanges = "framing_changes", garbageRuns = "garbage_runs"
    // Annex B depacketizer.
    case junkBytes = "junk_bytes", zeroLengthNALUnits = "zero_length_nal_units", oversizeNALUnits = "oversize_nal_units"
    case idleFlushes = "idle_flushes", cutNALUnits = "cut_nal_units"
    // MPEG-TS depacketizer.
    case tsPackets = "ts_packets", tsContinuityErrors = "ts_continuity_errors", tsPacketsDropped = "ts_packets_dropped"
    /// TS packets that came in 192-byte packets (M2TS: an arrival stamp before each) and in
    /// 204-byte ones (DVB: parity after each) (``TSPacketSize``).
    case tsPacketsM2TS = "ts_packets_m2ts", tsPacketsWithParity = "ts_packets_with_parity"
    /// KLV metadata (SMPTE ST 336) local sets read, and KLV PES payloads dropped as malformed
    /// (bad BER length, bad checksum, too large).
    case klvLocalSets = "klv_local_sets", malformedKLV = "malformed_klv"
    // SRT (libsrt's statistics): packets found missing (most come back retransmitted),
    // retransmitted packets received, packets dropped too late to play (also counted as lost).
    case srtPacketsLost = "srt_packets_lost", srtPacketsRetransmitted = "srt_packets_retransmitted"
    case srtPacketsDropped = "srt_packets_dropped"
    // RTP depacketizer.
    case rtpPackets = "rtp_packets", notRTP = "not_rtp", packetsLost = "packets_lost"
    case packetsReordered = "packets_reordered", packetsDuplicated = "packets_duplicated"
    /// Packets whose SSRC was not the one before: a new sender, or senders alternating on one port.
    case ssrcChanges = "ssrc_changes"
    /// Packets of a second SSRC dropped while the established sender kept sending (probation
    /// after RFC 3550 §A.1: a new SSRC takes over only once the established one has been silent
    /// for 100 ms, ``SSRCProbation``).
    case strayPackets = "stray_ssrc_packets"
    case damagedNALUnits = "damaged_nal_units", malformedPayloads = "malformed_payloads"
    /// RTCP compound packets (RFC 3550 §6), the sender reports among them, and those dropped
    /// as malformed.
    case rtcpPackets = "rtcp_packets", senderReports = "sender_reports", malformedRTCP = "malformed_rtcp"
    /// RTCP compound packets sent back to the sender by the source (receiver reports, RR +
    /// SDES, RFC 3550 §6.4.2, every 2 s while RTP flows). A source with no way back (a packet
    /// capture, a recording) sends none.
    case rtcpPacketsSent = "rtcp_packets_sent"
    /// Keyframe requests (RTCP PLI, RFC 4585 §6.3.1) sent, by reason: a picture damaged by lost
    /// packets, a cut fragmentation unit, a join at a picture that is no random-access point
    /// (exposed as `spyglass_keyframe_requests_total{reason}`).
    case keyframeRequestsLoss = "keyframe_requests_loss", keyframeRequestsCut = "keyframe_requests_cut"
    case keyframeRequestsJoin = "keyframe_requests_join"
    // Access-unit assembly.
    case nalUnits = "nal_units", accessUnits = "access_units", invalidNALUnits = "invalid_nal_units"
    case oversizeAccessUnits = "oversize_access_units", unitsWithoutPicture = "units_without_picture"
    case refusedAccessUnits = "refused_access_units", invalidParameterSets = "invalid_parameter_sets"
    case refusedPictureSize = "refused_picture_size", picturesSplit = "pictures_split"
    // Decode gate and decoder.
    case damagedAccessUnits = "damaged_access_units", framesOnDamagedReferences = "frames_on_damaged_references"
    case repairs, repairsFailed = "repairs_failed"
    case skippedBeforeJoin = "skipped_before_join", framesDecoded = "frames_decoded"
    case decodeErrors = "decode_errors", concealedFrames = "concealed_frames"
    // Presentation.
    case framesShown = "frames_shown", framesDropped = "frames_dropped"
    // Feed life.
    case resets, disconnects, codecChanges = "codec_changes"
    /// Times libavcodec's decoder was opened, and closed because a live input fell silent
    /// (``ReceiverOptions/decoderIdleReleaseMicros``: its pictures' memory goes back).
    case decoderOpens = "decoder_opens", decoderReleases = "decoder_releases"
    /// Pictures a replay decoded only as references on the way to a seek target (`--from`, the
    /// arrow keys): decoded, never shown, not dropped.
    case framesToSeekTarget = "frames_to_seek_target"
    /// The codec an SDP or `--codec` named was not the stream's (its parameter sets said the other).
    case codecMismatches = "codec_mismatches"
}

/// Stages whose time each frame spends is kept as a histogram (per pipeline).
public enum Stage: String, CaseIterable, Sendable, Codable {
    /// Last byte in → access unit complete and past the decode gate (decode start).
    case assembly
    /// libavcodec's decode call(s) for the picture's access unit.
    case decode
    /// Decoded → out of libavcodec: held for output order (B-frames), after ``decode``.
    case reorder
    /// Decoded → render start (waiting for the display).
    case queue
    /// Render start → presented.
    case render
    /// Last byte in → presented: everything the receiver adds.
    case receiverAdded = "receiver_added"
    /// Capture (sender's stamp) → presented.
    case glassToGlass = "glass_to_glass"
    /// RTP: the first damaged picture → the next random-access point (an IDR, an IRAP), with or
    /// without keyframe requests. One sample per recovery, not per frame.
    case recovery
}
