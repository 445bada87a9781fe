/// The body of an aggregation packet, after its own header: H.264 STAP-A (RFC 6184 §5.7.1) and
/// H.265 AP (RFC 7798 §4.4.2) are both a run of 16-bit network-order sizes, each followed by
/// that many bytes of one NAL unit.
import SpyglassBitstream
enum AggregationPacket {
    /// Emits each NAL unit of `body` in order.
    /// - Parameter minUnitBytes: the smallest NAL unit (its header: 1 byte for H.264, 2 for H.265).
    /// - Returns: false when the body is malformed: empty, a size under `minUnitBytes`, a unit
    ///   running past the end, or bytes left over that cannot hold a size and a unit. The units
    ///   before the fault have been emitted.
    static func split(_ body: ArraySlice<UInt8>, minUnitBytes: Int, arrivalMicros: UInt64, emit: (NALUnit) -> Void) -> Bool {
        guard !body.isEmpty else { return false }
        var i = body.startIndex
        while i < body.endIndex {
            guard i + 2 <= body.endIndex else { return false }
            let size = Int(body[i]) << 8 | Int(body[i + 1])
            i += 2
            guard size >= minUnitBytes, i + size <= body.endIndex else { return false }
            emit(NALUnit(bytes: Array(body[i..<(i + size)]), firstByteMicros: arrivalMicros, lastByteMicros: arrivalMicros))
            i += size
        }
        return true
    }
}
