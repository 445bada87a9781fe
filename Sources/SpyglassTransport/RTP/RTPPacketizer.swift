/// Access units to RTP packets: H.264 per RFC 6184 packetization mode 1 (single NAL unit
/// packets and FU-A), H.265 per RFC 7798 (single NAL unit packets and FU). The marker bit is set
/// on the last packet of each access unit; the timestamp is in 90 kHz ticks.
import SpyglassBitstream
public struct RTPPacketizer {
    public let codec: VideoCodec
    public let payloadType: UInt8
    public let ssrc: UInt32
    /// Largest RTP payload, bytes (default 1400 - 12).
    public let maxPayload: Int
    public private(set) var sequenceNumber: UInt16

    /// - Parameters:
    ///   - codec: H.264 or H.265.
    ///   - payloadType: dynamic payload type (default 96).
    ///   - ssrc: synchronization source.
    ///   - mtu: largest datagram, bytes (default 1400).
    public init(codec: VideoCodec, payloadType: UInt8 = 96, ssrc: UInt32, firstSequenceNumber: UInt16 = 0, mtu: Int = 1400) {
        self.codec = codec
        self.payloadType = payloadType
        self.ssrc = ssrc
        self.sequenceNumber = firstSequenceNumber
        self.maxPayload = max(64, mtu - 12)
    }

    /// Packetizes one access unit given as NAL units (headers included, no start codes).
    /// - Parameter timestamp90kHz: RTP timestamp of the picture.
    public mutating func packetize(_ units: [[UInt8]], timestamp90kHz: UInt32) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        for u in units where !u.isEmpty {
            if u.count <= maxPayload {
                payloads.append(u)
                continue
            }
            let headerSize = codec == .h264 ? 1 : 2
            var body = u[headerSize...]
            var first = true
            while !body.isEmpty {
                let room = maxPayload - (codec == .h264 ? 2 : 3)
                let chunk = body.prefix(room)
                body = body.dropFirst(chunk.count)
                let last = body.isEmpty
                var p: [UInt8]
                if codec == .h264 {
                    p = [(u[0] & 0xE0) | 28, (first ? 0x80 : 0) | (last ? 0x40 : 0) | (u[0] & 0x1F)]
                } else {
                    let type = (u[0] >> 1) & 0x3F
                    p = [(u[0] & 0x81) | (49 << 1), u[1], (first ? 0x80 : 0) | (last ? 0x40 : 0) | type]
                }
                p += chunk
                payloads.append(p)
                first = false
            }
        }
        var out: [[UInt8]] = []
        for (i, p) in payloads.enumerated() {
            out.append(RTPPacket.build(marker: i == payloads.count - 1, payloadType: payloadType,
                                       sequenceNumber: sequenceNumber, timestamp: timestamp90kHz, ssrc: ssrc, payload: p))
            sequenceNumber &+= 1
        }
        return out
    }
}
