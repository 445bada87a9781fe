/// Holds decoding back after a join or a sender restart until a picture a decoder can start
/// from: an IDR (H.264 type 5), an IRAP (H.265 types 16...23: BLA, IDR, CRA; libavcodec drops
/// the RASL pictures of a CRA it starts at), or a recovery point SEI (payloadType 6; H.264
/// §D.2.8: intra-refresh streams have no IDR after the first picture).
///
/// It never waits forever: after `timeoutMicros` or `maxSkippedAccessUnits`, whatever comes
/// is decoded (with concealment) rather than showing nothing.
public struct RandomAccessGate {
    public let timeoutMicros: UInt64
    public let maxSkippedAccessUnits: Int
    /// Access units (or, per NAL unit, VCL units) skipped while waiting.
    public private(set) var skipped = 0
    private var waiting = false
    private var since: UInt64 = 0
    private var skippedSinceRestart = 0

    /// - Parameters:
    ///   - timeoutMicros: longest wait for a random access point, µs (default 2 s).
    ///   - maxSkippedAccessUnits: longest wait in access units (default 300).
    public init(timeoutMicros: UInt64 = 2_000_000, maxSkippedAccessUnits: Int = 300) {
        self.timeoutMicros = timeoutMicros
        self.maxSkippedAccessUnits = maxSkippedAccessUnits
    }

    /// True while waiting for a random access point.
    public var isWaiting: Bool { waiting }

    /// Starts waiting (at start and after a sender restart).
    public mutating func restart(atMicros: UInt64) {
        waiting = true
        since = atMicros
        skippedSinceRestart = 0
    }

    /// Whole-access-unit mode: decode this one?
    public mutating func admit(accessUnit au: AccessUnit, nowMicros: UInt64) -> Bool {
        guard waiting else { return true }
        let recovery = au.units.contains { u in
            guard let h = NALUnitHeader(codec: au.codec, bytes: u.bytes), h.kind == .sei else { return false }
            return Self.hasRecoveryPoint(u.bytes, codec: au.codec)
        }
        if au.isRandomAccessPoint || recovery || giveUp(nowMicros) {
            waiting = false
            return true
        }
        skipped += 1
        skippedSinceRestart += 1
        return false
    }

    /// Per-NAL mode: feed this unit? Only slices are held back; parameter sets, SEI (capture
    /// stamps, recovery points) and the rest always pass.
    public mutating func admit(unit: [UInt8], header: NALUnitHeader, nowMicros: UInt64) -> Bool {
        guard waiting else { return true }
        if header.kind == .sei && Self.hasRecoveryPoint(unit, codec: header.codec) { waiting = false; return true }
        guard header.isVCL else { return true }
        if header.isRandomAccessPoint || giveUp(nowMicros) { waiting = false; return true }
        skipped += 1
        skippedSinceRestart += 1
        return false
    }

    private func giveUp(_ now: UInt64) -> Bool {
        now >= since + timeoutMicros || skippedSinceRestart >= maxSkippedAccessUnits
    }

    /// H.264 `recovery_frame_cnt` of a recovery point SEI (ITU-T H.264 §D.2.8: the pictures
    /// after this one, in output order, until the refresh is complete), 0 for an H.265 recovery
    /// point (§D.3.8 counts in POC, not pictures), nil when the unit carries none.
    public static func recoveryFrameCount(_ unit: [UInt8], codec: VideoCodec) -> Int? {
        let headerSize = codec == .h264 ? 1 : 2
        guard unit.count > headerSize, NALUnitHeader(codec: codec, bytes: unit)?.kind == .sei else { return nil }
        for m in SEIMessages(rbsp: RBSP.unescape(unit.dropFirst(headerSize))) where m.payloadType == 6 {
            guard codec == .h264 else { return 0 }
            var r = BitReader(Array(m.payload))
            return (try? r.ue()).map { Int(min($0, 1 << 16)) } ?? 0
        }
        return nil
    }

    /// True when an SEI unit carries a recovery point message (payloadType 6).
    public static func hasRecoveryPoint(_ unit: [UInt8], codec: VideoCodec) -> Bool {
        let headerSize = codec == .h264 ? 1 : 2
        guard unit.count > headerSize else { return false }
        // The payload type is the first byte(s) of the RBSP; a quick look before unescaping all.
        for m in SEIMessages(rbsp: RBSP.unescape(unit.dropFirst(headerSize))) where m.payloadType == 6 { return true }
        return false
    }
}
