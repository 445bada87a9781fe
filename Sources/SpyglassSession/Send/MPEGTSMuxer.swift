/// Wraps Annex B access units in an MPEG-2 transport stream (ISO/IEC 13818-1), as broadcast and
/// drone encoders send them: one program, PAT and PMT before every keyframe (and at least every
/// 500 ms), one PES per access unit with its PTS, PCR on the video PID; with `klv`, a KLV
/// metadata stream as STANAG 4609 feeds carry it (MISB ST 1402), with the video's PTS.
import SpyglassBitstream
public struct MPEGTSMuxer {
    /// How KLV metadata is carried (MISB ST 1402).
    public enum KLVCarriage: Sendable {
        /// None: no metadata stream in the PMT.
        case none
        /// stream_type 0x06 with a `KLVA` registration descriptor; private_stream_1 PES (0xBD)
        /// holding the KLV packets.
        case asynchronous
        /// stream_type 0x15 with a `KLVA` metadata descriptor (§2.6.60); metadata_stream PES
        /// (0xFC) holding one metadata AU cell (§2.12.4) per local set.
        case synchronous
    }

    /// PIDs used: the PMT, the video elementary stream and the KLV metadata stream.
    public static let pmtPID = 0x1000
    public static let videoPID = 0x100
    public static let klvPID = 0x101
    private let codec: VideoCodec
    private let klv: KLVCarriage
    private var cellSequence: UInt8 = 0
    private var cc: [Int: UInt8] = [:]
    private var lastTablesMicros: UInt64?

    /// - Parameters:
    ///   - codec: H.264 (stream_type 0x1B) or H.265 (0x24).
    ///   - klv: how a KLV metadata stream is listed in the PMT and carried (for the `klv` of
    ///     ``mux(_:pts90kHz:keyframe:nowMicros:klv:)``).
    public init(codec: VideoCodec, klv: KLVCarriage = .none) {
        self.codec = codec
        self.klv = klv
    }

    /// The packets of one KLV PES (bounded `PES_packet_length`, PTS, the last packet stuffed).
    private mutating func muxKLV(_ klv: [UInt8], pts90kHz: UInt64) -> [UInt8] {
        var body = klv
        if self.klv == .synchronous {
            // metadata_AU_cell: service 0, sequence, complete cell + random access, its length.
            body = [0x00, cellSequence, 0xDF, UInt8(klv.count >> 8), UInt8(klv.count & 0xFF)] + klv
            cellSequence &+= 1
        }
        let streamID: UInt8 = self.klv == .synchronous ? 0xFC : 0xBD
        var pes: [UInt8] = [0, 0, 1, streamID, UInt8((body.count + 8) >> 8), UInt8((body.count + 8) & 0xFF), 0x80, 0x80, 5]
        pes += Self.ptsBytes(pts90kHz & 0x1_FFFF_FFFF) + body
        var out: [UInt8] = []
        var off = 0
        while off < pes.count {
            let n = min(184, pes.count - off)
            var packet: [UInt8] = [0x47, UInt8((off == 0 ? 0x40 : 0) | (Self.klvPID >> 8)), UInt8(Self.klvPID & 0xFF)]
            if n == 184 {
                packet += [0x10 | next(Self.klvPID)]
            } else {
                let field = [UInt8](repeating: 0xFF, count: 184 - n - 1)
                packet += [0x30 | next(Self.klvPID), UInt8(field.count)] + (field.isEmpty ? [] : [0x00] + field.dropFirst())
            }
            out += packet + pes[off..<(off + n)]
            off += n
        }
        return out
    }

    /// A PTS field with '0010' prefix and marker bits (§2.4.3.7).
    private static func ptsBytes(_ pts: UInt64) -> [UInt8] {
        [UInt8(0x21 | ((pts >> 29) & 0x0E)), UInt8((pts >> 22) & 0xFF), UInt8(((pts >> 14) & 0xFE) | 1),
         UInt8((pts >> 7) & 0xFF), UInt8(((pts << 1) & 0xFE) | 1)]
    }

    /// The 188-byte packets of one access unit.
    /// - Parameters:
    ///   - annexB: the access unit, Annex B.
    ///   - pts90kHz: presentation time stamp, 90 kHz ticks (33 bits used).
    ///   - keyframe: a random-access point (PAT/PMT go first, random_access_indicator set).
    ///   - nowMicros: monotonic time, µs (tables are repeated at least every 500 ms).
    ///   - klv: SMPTE ST 336 packets describing this access unit (e.g. a ``UASLocalSet/encode(_:)``
    ///     local set, < 64 KiB), sent after the tables and before the picture with the same PTS.
    public mutating func mux(_ annexB: [UInt8], pts90kHz: UInt64, keyframe: Bool, nowMicros: UInt64, klv: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        if keyframe || lastTablesMicros.map({ nowMicros >= $0 + 500_000 }) ?? true {
            out += psiPacket(pid: 0, section: patSection())
            out += psiPacket(pid: Self.pmtPID, section: pmtSection())
            lastTablesMicros = nowMicros
        }
        if let klv, self.klv != .none { out += muxKLV(klv, pts90kHz: pts90kHz) }
        // PES header (§2.4.3.6): video stream 0xE0, PES_packet_length 0 (unbounded), PTS only.
        let pts = pts90kHz & 0x1_FFFF_FFFF
        var pes: [UInt8] = [0, 0, 1, 0xE0, 0, 0, 0x80, 0x80, 5]
        pes += Self.ptsBytes(pts)
        pes += annexB
        var off = 0
        var first = true
        while off < pes.count {
            let remaining = pes.count - off
            var packet: [UInt8] = [0x47, UInt8((first ? 0x40 : 0) | (Self.videoPID >> 8)), UInt8(Self.videoPID & 0xFF), 0]
            if !first && remaining >= 184 {
                packet[3] = 0x10 | next(Self.videoPID)
                packet += pes[off..<(off + 184)]
                off += 184
            } else {
                // An adaptation field (§2.4.3.5): the first packet's carries the PCR (= PTS: base
                // 33 bits, 6 reserved, extension 9 bits); the last one's stuffs the packet full.
                var field: [UInt8] = first
                    ? [keyframe ? 0x50 : 0x10, UInt8((pts >> 25) & 0xFF), UInt8((pts >> 17) & 0xFF),
                       UInt8((pts >> 9) & 0xFF), UInt8((pts >> 1) & 0xFF), UInt8(((pts & 1) << 7) | 0x7E), 0]
                    : []
                let room = 184 - 1 - field.count
                let n = min(room, remaining)
                let stuffing = room - n
                if stuffing > 0 { field += (field.isEmpty ? [0x00] : []) + [UInt8](repeating: 0xFF, count: field.isEmpty ? stuffing - 1 : stuffing) }
                packet[3] = 0x30 | next(Self.videoPID)
                packet.append(UInt8(field.count))
                packet += field
                packet += pes[off..<(off + n)]
                off += n
            }
            out += packet
            first = false
        }
        return out
    }

    private mutating func next(_ pid: Int) -> UInt8 {
        let c = cc[pid].map { ($0 + 1) & 0xF } ?? 0
        cc[pid] = c
        return c
    }

    private mutating func psiPacket(pid: Int, section: [UInt8]) -> [UInt8] {
        var p: [UInt8] = [0x47, UInt8(0x40 | (pid >> 8)), UInt8(pid & 0xFF), 0x10 | next(pid), 0x00]
        p += section
        p += [UInt8](repeating: 0xFF, count: 188 - p.count)
        return p
    }

    private func patSection() -> [UInt8] {
        // program_association_section (§2.4.4.3): program 1 → the PMT.
        withCRC([0x00, 0xB0, 13, 0x00, 0x01, 0xC1, 0x00, 0x00,
                 0x00, 0x01, UInt8(0xE0 | (Self.pmtPID >> 8)), UInt8(Self.pmtPID & 0xFF)])
    }

    private func pmtSection() -> [UInt8] {
        // TS_program_map_section (§2.4.4.8): PCR on the video PID, the video stream, and the KLV
        // stream with its registration_descriptor (tag 5, format_identifier "KLVA") or its
        // metadata_descriptor (tag 0x26: application format 0x0100, format 0xFF, "KLVA", service 0).
        let type: UInt8 = codec == .h264 ? 0x1B : 0x24
        let klvPID = [UInt8(0xE0 | (Self.klvPID >> 8)), UInt8(Self.klvPID & 0xFF)]
        let klvEntry: [UInt8]
        switch klv {
        case .none: klvEntry = []
        case .asynchronous: klvEntry = [0x06] + klvPID + [0xF0, 6, 0x05, 4] + Array("KLVA".utf8)
        case .synchronous: klvEntry = [0x15] + klvPID + [0xF0, 11, 0x26, 9, 0x01, 0x00, 0xFF] + Array("KLVA".utf8) + [0x00, 0x0F]
        }
        return withCRC([0x02, 0xB0, UInt8(18 + klvEntry.count), 0x00, 0x01, 0xC1, 0x00, 0x00,
                        UInt8(0xE0 | (Self.videoPID >> 8)), UInt8(Self.videoPID & 0xFF), 0xF0, 0x00,
                        type, UInt8(0xE0 | (Self.videoPID >> 8)), UInt8(Self.videoPID & 0xFF), 0xF0, 0x00] + klvEntry)
    }

    /// Appends the section's CRC_32 (MPEG-2: polynomial 0x04C11DB7, initial 0xFFFFFFFF, no reflection).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    private func withCRC(_ s: [UInt8]) -> [UInt8] {
        let c = Self.crc32(s)
        return s + [UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF)]
    }
}
