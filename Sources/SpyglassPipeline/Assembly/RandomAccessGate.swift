/// Holds decoding back after a join or a sender restart until a picture a decoder can start
/// from: an IDR (H.264 type 5), an IRAP (H.265 types 16...23: BLA, IDR, CRA; libavcodec drops
/// the RASL pictures of a CRA it starts at), or a recovery point SEI (payloadType 6; H.264
/// §D.2.8: intra-refresh streams have no IDR after the first picture), or a picture whose
/// slices are all I/SI (``AccessUnit/isAllIntra``: periodic intra pictures that are not IDR, a
/// recording cut mid-stream).
///
/// It never waits forever: after `timeoutMicros` or `maxSkippedAccessUnits`, whatever comes
/// is decoded (with concealment) rather than showing nothing.
import SpyglassBitstream
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

    /// Starts waiting (at start and after a sender restart).
    public mutating func restart(atMicros: UInt64) {
        waiting = true
        since = atMicros
        skippedSinceRestart = 0
    }

    /// Whole-access-unit mode: decode this one?
    public mutating func admit(accessUnit au: AccessUnit, nowMicros: UInt64) -> Bool {
        guard waiting else { return true }
        // An all-intra picture that is not IDR/IRAP: nothing better may ever come (periodic
        // intra pictures, a recording cut mid-stream). libavcodec flags any picture that then
        // references something from before it, so that damage is still shown as such.
        if au.isJoinPoint || au.isAllIntra || giveUp(nowMicros) {
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

    /// True when an SEI unit carries a recovery point message (payloadType 6).
    public static func hasRecoveryPoint(_ unit: [UInt8], codec: VideoCodec) -> Bool {
        SEIFacts(unit: unit, codec: codec)?.recoveryFrameCount != nil
    }
}
