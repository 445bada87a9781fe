/// One NAL unit as it came out of the byte stream: header and payload, start code removed,
/// emulation-prevention bytes still in place (what libavcodec wants).
public struct NALUnit: Sendable {
    /// NAL unit bytes as sent (header first), without the start code.
    public var bytes: [UInt8]
    /// Monotonic arrival time of the datagram/read holding the first byte, in µs.
    public var firstByteMicros: UInt64
    /// Monotonic arrival time of the datagram/read holding the last byte, in µs.
    public var lastByteMicros: UInt64
    /// True when bytes were lost inside this NAL unit (truncated datagram, cut at an idle gap, size cap).
    public var damaged: Bool
    /// The parsed header, set once the codec is known (``parsed(as:)``); later stages read it
    /// instead of parsing the bytes again. nil before that, or when the header is invalid.
    public private(set) var header: NALUnitHeader?
    /// Set on a unit passed on again whole after an idle flush had passed it on cut
    /// (``AnnexBScanner/reopensCutUnits``): the cut unit's last-byte arrival, monotonic µs,
    /// which names it among the units already passed on.
    public var repairs: UInt64?

    /// - Parameters:
    ///   - bytes: NAL unit bytes, header first, no start code.
    ///   - firstByteMicros: arrival of the first byte (monotonic µs).
    ///   - lastByteMicros: arrival of the last byte (monotonic µs).
    ///   - damaged: bytes were lost inside this unit.
    public init(bytes: [UInt8], firstByteMicros: UInt64 = 0, lastByteMicros: UInt64 = 0, damaged: Bool = false) {
        self.bytes = bytes
        self.firstByteMicros = firstByteMicros
        self.lastByteMicros = lastByteMicros
        self.damaged = damaged
    }

    /// This unit with its header parsed for `codec` (ITU-T H.264 §7.3.1, H.265 §7.3.1.2).
    /// Parses only when not already parsed for that codec.
    /// - Returns: the unit with ``header`` set, or nil when the header is invalid.
    public func parsed(as codec: VideoCodec) -> NALUnit? {
        if let h = header, h.codec == codec { return self }
        guard let h = NALUnitHeader(codec: codec, bytes: bytes) else { return nil }
        var u = self
        u.header = h
        return u
    }
}
