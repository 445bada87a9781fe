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
}
