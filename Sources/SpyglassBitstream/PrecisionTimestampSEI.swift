/// The MISB ST 0604 precision time stamp, carried in a `user_data_unregistered` SEI message
/// (payloadType 5: ITU-T H.264 §D.1.7 / H.265 §D.2.7).
///
/// Payload (28 bytes): a 16-byte UUID (`"MISPmicrosectime"` in H.264; the ST 0604 H.265 UUID
/// `a8687dd4-d759-3758-a5ce-f0338b6545f1` in H.265), one time-status byte, then the 8-byte
/// ST 0603 time stamp (µs since 1970-01-01 UTC) with a `0xFF` after its 2nd, 4th and 6th byte
/// (ST 0604 §7.4: the pad bytes keep the time stamp from emulating a start code).
/// Readers accept either UUID in either codec, as other tools write both.
public enum PrecisionTimestampSEI {
    /// "MISPmicrosectime" (ST 0604, H.264 and MPEG-2).
    public static let h264UUID: [UInt8] = Array("MISPmicrosectime".utf8)
    /// ST 0604 identifier for H.265.
    public static let h265UUID: [UInt8] = [0xa8, 0x68, 0x7d, 0xd4, 0xd7, 0x59, 0x37, 0x58,
                                           0xa5, 0xce, 0xf0, 0x33, 0x8b, 0x65, 0x45, 0xf1]
    /// Time status: locked, no discontinuity, forward, reserved bits set (ST 0603).
    public static let statusLocked: UInt8 = 0x1F

    /// The 28-byte `user_data_unregistered` payload for `micros` (µs since the Unix epoch).
    public static func payload(micros: UInt64, codec: VideoCodec, status: UInt8 = statusLocked) -> [UInt8] {
        var p = codec == .h264 ? h264UUID : h265UUID
        p.append(status)
        for i in 0..<8 {
            p.append(UInt8(truncatingIfNeeded: micros >> (56 - 8 * UInt64(i))))
            if i == 1 || i == 3 || i == 5 { p.append(0xFF) }
        }
        return p
    }

    /// A complete SEI NAL unit (header, one sei_message, rbsp trailing bits), emulation
    /// prevention applied: H.264 type 6, H.265 prefix SEI type 39 with `nuh_temporal_id_plus1` 1.
    public static func nalUnit(micros: UInt64, codec: VideoCodec) -> [UInt8] {
        let payload = payload(micros: micros, codec: codec)
        var rbsp: [UInt8] = [5, UInt8(payload.count)]   // payloadType 5, payloadSize 28 (both < 255)
        rbsp += payload
        rbsp.append(0x80)                                 // rbsp_stop_one_bit + alignment
        let header: [UInt8] = codec == .h264 ? [0x06] : [0x4E, 0x01]
        return header + RBSP.escape(rbsp)
    }

    /// Reads a precision time stamp from an SEI NAL unit (as sent: header included, escaped).
    /// - Returns: µs since the Unix epoch, or nil when the unit holds none (or is malformed).
    public static func read(seiNALUnit unit: [UInt8], codec: VideoCodec) -> UInt64? {
        let headerSize = codec == .h264 ? 1 : 2
        guard unit.count > headerSize else { return nil }
        let rbsp = RBSP.unescape(unit.dropFirst(headerSize))
        for message in SEIMessages(rbsp: rbsp) where message.payloadType == 5 {
            if let t = timestamp(fromPayload: message.payload) { return t }
        }
        return nil
    }

    /// Decodes a `user_data_unregistered` payload if it is an ST 0604 time stamp.
    public static func timestamp<C: RandomAccessCollection>(fromPayload p: C) -> UInt64? where C.Element == UInt8, C.Index == Int {
        guard p.count >= 28 else { return nil }
        let s = p.startIndex
        let uuid = Array(p[s..<(s + 16)])
        guard uuid == h264UUID || uuid == h265UUID else { return nil }
        let stamp = p[(s + 17)..<(s + 28)]
        var bytes: [UInt8] = []
        for (i, b) in stamp.enumerated() where !(i == 2 || i == 5 || i == 8) { bytes.append(b) }
        guard bytes.count == 8 else { return nil }
        return bytes.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
    }
}

/// Iterates the `sei_message()`s of an SEI RBSP (ITU-T H.264 §7.3.2.3.1, H.265 §7.3.5):
/// payloadType and payloadSize are each a run of 0xFF bytes plus a last byte.
/// Stops at the trailing bits, or at a message that runs past the end (malformed).
public struct SEIMessages: Sequence, IteratorProtocol {
    public struct Message {
        public let payloadType: Int
        public let payload: ArraySlice<UInt8>
    }
    private let rbsp: [UInt8]
    private var offset = 0

    /// - Parameter rbsp: SEI RBSP without the NAL header (emulation prevention removed).
    public init(rbsp: [UInt8]) { self.rbsp = rbsp }

    public mutating func next() -> Message? {
        // more_rbsp_data: stop at the 0x80 trailing byte or the end.
        guard offset < rbsp.count, !(offset == rbsp.count - 1 && rbsp[offset] == 0x80) else { return nil }
        guard let type = readVarint(), let size = readVarint(), size <= rbsp.count - offset else {
            offset = rbsp.count
            return nil
        }
        let payload = rbsp[offset..<(offset + size)]
        offset += size
        return Message(payloadType: type, payload: payload)
    }

    private mutating func readVarint() -> Int? {
        var v = 0
        while offset < rbsp.count {
            let b = rbsp[offset]
            offset += 1
            v += Int(b)
            if b != 0xFF { return v }
            if v > 1 << 24 { return nil }
        }
        return nil
    }
}
