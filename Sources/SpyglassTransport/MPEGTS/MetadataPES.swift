/// The KLV metadata stream of an MPEG-TS (MISB ST 1402, STANAG 4609): PES packets (ISO/IEC
/// 13818-1 §2.4.3.6) on the PID the PMT names — stream_type 0x06 with a `KLVA` registration
/// descriptor (asynchronous), or 0x15 with a `KLVA` metadata descriptor (synchronous, each
/// payload a series of metadata AU cells, §2.12.4) — whose payloads are SMPTE ST 336 KLV
/// packets; the MISB ST 0601 local sets among them are decoded.
///
/// A PES is decoded when it is complete: its `PES_packet_length` reached, or the next PES start.
/// One larger than ``maxBytes``, or malformed, is one counted drop.
public struct MetadataPES {
    /// Largest metadata PES kept, bytes.
    public static let maxBytes = 65_536
    /// True for stream_type 0x15 (metadata AU cells), false for 0x06 (KLV directly).
    public let synchronous: Bool
    private var buffer: [UInt8] = []
    private var pts: UInt64?
    private var bytesLeft: Int?
    private var collecting = false
    /// Local sets decoded, and PES payloads dropped as malformed or oversize.
    public private(set) var localSets = 0
    public private(set) var malformed = 0

    public init(synchronous: Bool) { self.synchronous = synchronous }

    /// Takes one TS packet's payload of the metadata PID.
    /// - Parameters:
    ///   - payload: the payload bytes.
    ///   - start: `payload_unit_start_indicator`: a PES header begins here.
    /// - Returns: the local sets of the PES packets completed, with their PTS (90 kHz) when sent.
    public mutating func push(_ payload: ArraySlice<UInt8>, start: Bool) -> [(pts: UInt64?, metadata: PlatformMetadata)] {
        var out: [(pts: UInt64?, metadata: PlatformMetadata)] = []
        var data = payload
        if start {
            if collecting { out += complete() }
            guard let header = PESHeader(data) else { malformed += 1; return out }
            pts = header.pts
            bytesLeft = header.payloadLength
            data = data[header.payloadStart...]
            collecting = true
        }
        guard collecting else { return out }
        if let left = bytesLeft { data = data.prefix(max(0, left)); bytesLeft = left - data.count }
        guard buffer.count + data.count <= Self.maxBytes else {
            malformed += 1
            reset()
            return out
        }
        buffer += data
        if let left = bytesLeft, left <= 0 { out += complete() }
        return out
    }

    private mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        collecting = false
        bytesLeft = nil
    }

    /// Decodes the PES collected.
    private mutating func complete() -> [(pts: UInt64?, metadata: PlatformMetadata)] {
        defer { reset() }
        guard let klv = synchronous ? Self.cellData(buffer[...]) : buffer else { malformed += 1; return [] }
        let (packets, wellFormed) = KLV.packets(klv[...])
        var out: [(pts: UInt64?, metadata: PlatformMetadata)] = []
        var bad = !wellFormed
        for p in packets where p.key.elementsEqual(UASLocalSet.key) {
            if let m = UASLocalSet.decode(p) { out.append((pts, m)) } else { bad = true }
        }
        if bad { malformed += 1 }
        localSets += out.count
        return out
    }

    /// The data of a series of metadata AU cells (§2.12.4, Table 2-97): each a 5-byte header
    /// (service id, sequence number, flags, `AU_cell_data_length`) and its data. Nil when a cell
    /// runs past the end.
    public static func cellData(_ d: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var i = d.startIndex
        while i < d.endIndex {
            guard i + 5 <= d.endIndex else { return nil }
            let length = Int(d[i + 3]) << 8 | Int(d[i + 4])
            guard i + 5 + length <= d.endIndex else { return nil }
            out += d[(i + 5)..<(i + 5 + length)]
            i += 5 + length
        }
        return out
    }
}
