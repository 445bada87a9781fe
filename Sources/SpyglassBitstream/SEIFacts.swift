/// What Spyglass reads from one SEI NAL unit, parsed once (the RBSP is unescaped once for both).
///
/// - Capture stamp: MISB ST 0604 precision time stamp, user data unregistered (payloadType 5).
/// - Recovery point (payloadType 6): H.264 `recovery_frame_cnt` (§D.2.8: pictures after this one,
///   in output order, until the refresh is complete); 0 for H.265 (§D.3.8 counts in POC).
public struct SEIFacts: Equatable, Sendable {
    /// Capture instant, µs since the Unix epoch (sender's wall clock), when a stamp is present.
    public var captureWallMicros: UInt64?
    /// Pictures until the refresh completes, when a recovery point message is present.
    public var recoveryFrameCount: Int?

    /// Parses an SEI unit (header included, emulation prevention in place).
    /// - Returns: nil when the unit is not a prefix SEI of `codec` or carries neither message.
    public init?(unit: [UInt8], codec: VideoCodec) {
        let headerSize = codec == .h264 ? 1 : 2
        guard unit.count > headerSize, NALUnitHeader(codec: codec, bytes: unit)?.kind == .sei else { return nil }
        for m in SEIMessages(rbsp: RBSP.unescape(unit.dropFirst(headerSize))) {
            if m.payloadType == 5, captureWallMicros == nil {
                captureWallMicros = PrecisionTimestampSEI.timestamp(fromPayload: m.payload)
            } else if m.payloadType == 6, recoveryFrameCount == nil {
                if codec == .h264 {
                    var r = BitReader(Array(m.payload))
                    recoveryFrameCount = (try? r.ue()).map { Int(min($0, 1 << 16)) } ?? 0
                } else {
                    recoveryFrameCount = 0
                }
            }
        }
        if captureWallMicros == nil && recoveryFrameCount == nil { return nil }
    }
}
