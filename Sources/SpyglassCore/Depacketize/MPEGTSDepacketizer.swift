/// MPEG-2 transport stream (ISO/IEC 13818-1) carrying H.264 (stream_type 0x1B) or H.265 (0x24):
/// over UDP (usually 7 × 188 bytes a datagram), TCP, files and pipes.
///
/// - Packets (§2.4.3.2): 188 bytes from the sync byte 0x47; a byte stream is resynchronized on
///   the sync byte after junk. Packets with `transport_error_indicator` set or scrambled are
///   dropped and counted.
/// - PAT (PID 0, §2.4.4.3) → the first program's PMT (or `program`), PMT (§2.4.4.8) → the first
///   H.264/H.265 elementary stream (or `pid`).
/// - PES (§2.4.3.6): the payload of the video PID is an Annex B byte stream; a PES is one access
///   unit. It ends at the first of: `PES_packet_length` bytes (when the muxer sets it), a packet
///   filled with adaptation-field stuffing (muxers stuff only a PES's last packet; a sender that
///   shows otherwise loses this rule), the next PES start (`payload_unit_start_indicator`), an
///   idle input (live), the end of input.
/// - An idle end that more of the same PES follows (a pause inside a picture: a relay, a
///   congested link) doubles the idle time, up to 50 ms, as for raw Annex B; the picture that
///   went out without its tail is damaged.
/// - `continuity_counter` gaps on the video PID (§2.4.3.3) mark the access unit damaged and are
///   counted as TS loss; a repeated counter (a duplicate packet) is dropped.
public struct MPEGTSDepacketizer: Depacketizer {
    public var name: String { "mpeg-ts" }
    public private(set) var codec: VideoCodec?
    private var carry: [UInt8] = []
    private var pmtPID: Int?
    private var videoPID: Int?
    private let wantProgram: Int?
    private let wantPID: Int?
    private var lastCC: [Int: UInt8] = [:]
    private var scanner: AnnexBScanner
    private var inPES = false
    private var pesBytesLeft: Int?
    private var pesHeaderPending: [UInt8] = []
    /// The idle time in force, µs (raised when it ended a PES too early).
    private var idleFlushMicros: Int
    /// Largest idle time learning may reach, µs.
    static let maxIdleFlushMicros = 50_000
    private var lastDataMicros: UInt64 = 0
    private var counters: [Metric: Int] = [:]
    private var saidStreams = false
    /// Whether a stuffed packet ends the PES (until this sender shows it stuffs inside one).
    private var trustsStuffing = true
    private var lastEndedByStuffing = false
    private var lastEndedByIdle = false

    /// - Parameters:
    ///   - maxUnitBytes: cap on one NAL unit, bytes.
    ///   - idleFlushMicros: quiet time that ends the PES in progress on a live input, µs (0: never).
    ///   - program: `program_number` to play (nil: the first in the PAT).
    ///   - pid: elementary PID to play (nil: the first H.264/H.265 stream of the program).
    public init(maxUnitBytes: Int, idleFlushMicros: Int, program: Int? = nil, pid: Int? = nil) {
        scanner = AnnexBScanner(maxUnitBytes: maxUnitBytes)
        self.idleFlushMicros = idleFlushMicros
        wantProgram = program
        wantPID = pid
        if let pid { videoPID = pid }
    }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        lastDataMicros = arrivalMicros
        if truncated { emit(.damage(lostPackets: 0)) }
        carry.append(contentsOf: chunk.bindMemory(to: UInt8.self))
        var i = 0
        while carry.count - i >= 188 {
            guard carry[i] == 0x47 else {
                // Lost sync: skip to the next sync byte.
                counters[.junkBytes, default: 0] += 1
                i += 1
                continue
            }
            packet(carry[i..<(i + 188)], arrivalMicros: arrivalMicros, emit: emit)
            i += 188
        }
        carry.removeFirst(i)
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        inPES && idleFlushMicros > 0 ? idleFlushMicros : pollMicros
    }

    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        guard inPES, idleFlushMicros > 0, nowMicros >= lastDataMicros + UInt64(idleFlushMicros) else { return }
        endPES(.idleGap, atMicros: nowMicros, emit: emit)
    }

    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if inPES { endPES(.endOfStream, atMicros: nowMicros, emit: emit) }
        emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros))
    }

    public var counts: [Metric: Int] {
        var c = counters
        let k = scanner.counters
        c[.zeroLengthNALUnits, default: 0] += k.zeroLengthUnits
        c[.oversizeNALUnits, default: 0] += k.oversizeUnits
        c[.junkBytes, default: 0] += k.junkBytes
        return c
    }

    // MARK: - packets

    private mutating func packet(_ p: ArraySlice<UInt8>, arrivalMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        let s = p.startIndex
        counters[.tsPackets, default: 0] += 1
        let tei = p[s + 1] & 0x80 != 0
        let pusi = p[s + 1] & 0x40 != 0
        let pid = Int(p[s + 1] & 0x1F) << 8 | Int(p[s + 2])
        let scrambled = p[s + 3] >> 6 != 0
        let afc = (p[s + 3] >> 4) & 0x3
        let cc = p[s + 3] & 0xF
        if tei || scrambled {
            counters[.tsPacketsDropped, default: 0] += 1
            if pid == videoPID && inPES { emit(.damage(lostPackets: 1)) }
            return
        }
        var off = s + 4
        var stuffed = false
        if afc & 0x2 != 0 {
            // adaptation_field_length, then the field (§2.4.3.4).
            stuffed = Self.hasStuffing(p[off...])
            off += 1 + Int(p[off])
            guard off <= p.endIndex else { counters[.tsPacketsDropped, default: 0] += 1; return }
        }
        guard afc & 0x1 != 0, off < p.endIndex else { return }   // no payload
        if pid == videoPID, !continuityHolds(pid: pid, cc: cc, emit: emit) { return }
        let payload = p[off..<p.endIndex]
        switch pid {
        case 0: if pusi { readPAT(payload) }
        case pmtPID: if pusi { readPMT(payload, emit: emit) }
        case videoPID:
            pes(payload, start: pusi, arrivalMicros: arrivalMicros, emit: emit)
            // A muxer fills the last packet of an unbounded PES with stuffing: the PES ends here.
            if stuffed && trustsStuffing && inPES { endPES(.tsStuffing, atMicros: arrivalMicros, emit: emit) }
        default: break
        }
    }

    /// False for a duplicate packet (drop it). A gap is counted and damages the PES in progress.
    private mutating func continuityHolds(pid: Int, cc: UInt8, emit: (DepacketizerEvent) -> Void) -> Bool {
        defer { lastCC[pid] = cc }
        guard let last = lastCC[pid] else { return true }
        if cc == last { return false }
        let expected = (last + 1) & 0xF
        if cc != expected {
            let lost = Int((cc &- expected) & 0xF)
            counters[.tsContinuityErrors, default: 0] += 1
            if inPES { emit(.damage(lostPackets: lost)) }
        }
        return true
    }

    /// The PSI section in a payload that starts one (pointer_field first, §2.4.4.1).
    private func section(_ payload: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let pointer = payload.first else { return nil }
        let start = payload.startIndex + 1 + Int(pointer)
        guard start + 3 <= payload.endIndex else { return nil }
        let length = Int(payload[start + 1] & 0x0F) << 8 | Int(payload[start + 2])
        guard length >= 9, start + 3 + length <= payload.endIndex else { return nil }
        return payload[start..<(start + 3 + length - 4)]   // without the CRC_32
    }

    private mutating func readPAT(_ payload: ArraySlice<UInt8>) {
        guard let sec = section(payload), sec.first == 0x00 else { return }
        var i = sec.startIndex + 8
        while i + 4 <= sec.endIndex {
            let program = Int(sec[i]) << 8 | Int(sec[i + 1])
            let pid = Int(sec[i + 2] & 0x1F) << 8 | Int(sec[i + 3])
            i += 4
            if program == 0 { continue }   // the network PID
            if wantProgram == nil || wantProgram == program { pmtPID = pid; return }
        }
    }

    private mutating func readPMT(_ payload: ArraySlice<UInt8>, emit: (DepacketizerEvent) -> Void) {
        guard let sec = section(payload), sec.first == 0x02, sec.count >= 12 else { return }
        let infoLength = Int(sec[sec.startIndex + 10] & 0x0F) << 8 | Int(sec[sec.startIndex + 11])
        var i = sec.startIndex + 12 + infoLength
        var others: [String] = []
        while i + 5 <= sec.endIndex {
            let type = sec[i]
            let pid = Int(sec[i + 1] & 0x1F) << 8 | Int(sec[i + 2])
            let esInfo = Int(sec[i + 3] & 0x0F) << 8 | Int(sec[i + 4])
            i += 5 + esInfo
            let video: VideoCodec? = type == 0x1B ? .h264 : type == 0x24 ? .h265 : nil
            if let video, (wantPID == nil && (videoPID == nil || videoPID == pid)) || wantPID == pid {
                if videoPID != pid { lastCC[pid] = nil }
                videoPID = pid
                codec = video
            } else {
                others.append(String(format: "PID %d type 0x%02X", pid, type))
            }
        }
        if !saidStreams, let v = videoPID, let codec {
            saidStreams = true
            emit(.note("MPEG-TS: \(codec.displayName) on PID \(v)" + (others.isEmpty ? "" : "; also \(others.joined(separator: ", ")) (not played)")))
        }
    }

    // MARK: - PES

    private mutating func pes(_ payload: ArraySlice<UInt8>, start: Bool, arrivalMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        var data = payload
        if start {
            if inPES { endPES(.nextAccessUnit, atMicros: arrivalMicros, emit: emit) }
            // PES header (§2.4.3.6): 00 00 01, stream_id, PES_packet_length, flags, header length.
            guard data.count >= 9, data[data.startIndex] == 0, data[data.startIndex + 1] == 0, data[data.startIndex + 2] == 1 else {
                counters[.tsPacketsDropped, default: 0] += 1
                return
            }
            let s = data.startIndex
            let length = Int(data[s + 4]) << 8 | Int(data[s + 5])
            let headerLength = Int(data[s + 8])
            guard s + 9 + headerLength <= data.endIndex else { counters[.tsPacketsDropped, default: 0] += 1; return }
            pesBytesLeft = length > 0 ? length - 3 - headerLength : nil
            data = data[(s + 9 + headerLength)...]
            inPES = true
        }
        guard inPES else {
            if lastEndedByStuffing && trustsStuffing {
                // More of a PES that stuffing had ended: this muxer stuffs inside a PES. End PESs
                // by the next start (or idle) from now on; the picture went on without this tail.
                trustsStuffing = false
                counters[.tsPacketsDropped, default: 0] += 1
                emit(.note("MPEG-TS: this sender stuffs packets inside a PES; access units now end at the next PES start or an idle gap"))
                emit(.damage(lostPackets: 1))
            }
            if lastEndedByIdle { idleEndedTooEarly(emit) }
            return   // joined in the middle of a PES: wait for the next start
        }
        if let left = pesBytesLeft { data = data.prefix(max(0, left)); pesBytesLeft = left - data.count }
        data.withUnsafeBytes { raw in
            scanner.push(raw, arrivalMicros: arrivalMicros) { emit(.unit($0)) }
        }
        if let left = pesBytesLeft, left <= 0 { endPES(.pesLength, atMicros: arrivalMicros, emit: emit) }
    }

    /// True when an adaptation field holds stuffing bytes beyond the fields its flags announce
    /// (§2.4.3.4/2.4.3.5): `field` starts at `adaptation_field_length`.
    static func hasStuffing(_ field: ArraySlice<UInt8>) -> Bool {
        guard let length = field.first else { return false }
        if length == 0 { return true }   // one byte of stuffing: the length byte itself
        let s = field.startIndex
        guard field.count > 1 + Int(length) - 1, field.count >= 2 else { return false }
        let flags = field[s + 1]
        var needed = 1
        if flags & 0x10 != 0 { needed += 6 }   // PCR
        if flags & 0x08 != 0 { needed += 6 }   // OPCR
        if flags & 0x04 != 0 { needed += 1 }   // splice_countdown
        if flags & 0x02 != 0 {                  // transport_private_data
            guard s + 1 + needed < field.endIndex else { return false }
            needed += 1 + Int(field[s + 1 + needed])
        }
        if flags & 0x01 != 0 {                  // adaptation_field_extension
            guard s + 1 + needed < field.endIndex else { return false }
            needed += 1 + Int(field[s + 1 + needed])
        }
        return Int(length) > needed
    }

    /// More of a PES that an idle gap had ended: the sender (or the link) pauses inside a
    /// picture. Wait twice as long from now on; the picture went on without this tail.
    private mutating func idleEndedTooEarly(_ emit: (DepacketizerEvent) -> Void) {
        lastEndedByIdle = false
        counters[.cutNALUnits, default: 0] += 1
        emit(.damage(lostPackets: 1))
        guard idleFlushMicros < Self.maxIdleFlushMicros else { return }
        idleFlushMicros = min(Self.maxIdleFlushMicros, idleFlushMicros * 2)
        emit(.note("MPEG-TS: a pause inside a picture ended it early; pictures now end after \(idleFlushMicros / 1000) ms idle"))
    }

    private mutating func endPES(_ rule: AccessUnit.Completion, atMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        lastEndedByStuffing = rule == .tsStuffing
        lastEndedByIdle = rule == .idleGap
        scanner.flush(atMicros: atMicros, reason: .endOfStream) { emit(.unit($0)) }
        emit(.accessUnitEnd(rule, atMicros: atMicros))
        inPES = false
        pesBytesLeft = nil
    }
}
