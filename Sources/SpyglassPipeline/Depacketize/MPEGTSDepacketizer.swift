/// MPEG-2 transport stream (ISO/IEC 13818-1) carrying H.264 (stream_type 0x1B) or H.265 (0x24):
/// over UDP (usually 7 × 188 bytes a datagram), TCP, files and pipes.
///
/// - Packets (§2.4.3.2): 188 bytes from the sync byte 0x47, or inside 192- or 204-byte packets
///   (``TSPacketSize``: M2TS arrival stamps, DVB parity), told from the first bytes and said
///   once; a byte stream is resynchronized on the sync byte after junk. Packets with `transport_error_indicator` set or scrambled are
///   dropped and counted.
/// - PAT (PID 0, §2.4.4.3) → the PMTs of its programs (or of `program` alone), PMT (§2.4.4.8)
///   → the first H.264/H.265 elementary stream (or `pid`). A program or PID that is not there
///   refuses the input with a line listing what is (``DepacketizerEvent/refuse(_:)``).
/// - PES (§2.4.3.6): the payload of the video PID is an Annex B byte stream; a PES is one access
///   unit. It ends at the first of: `PES_packet_length` bytes (when the muxer sets it), a packet
///   filled with adaptation-field stuffing (muxers stuff only a PES's last packet; a sender that
///   shows otherwise loses this rule), the next PES start (`payload_unit_start_indicator`), an
///   idle input (live), the end of input. An idle end is a guess: when more of the same PES
///   comes, the NAL unit it cut is passed on again whole (``DepacketizerEvent/cut(unitLastByteMicros:pauseMicros:)``,
///   which the feed repairs), as on a raw byte stream, and the idle time doubles, up to 50 ms
///   (a sender or relay that pauses inside pictures).
/// - KLV metadata (``MetadataPES``): each MISB ST 0601 local set is passed on
///   (``DepacketizerEvent/metadata(_:)``), and its Precision Time Stamp (tag 2) is the capture
///   time of the access unit with the same PTS (or, without a PTS, of the one in progress or next).
/// - `continuity_counter` gaps on the video PID (§2.4.3.3) mark the access unit damaged and are
///   counted as TS loss; a repeated counter (a duplicate packet) is dropped.
import SpyglassBitstream
import SpyglassTransport
public struct MPEGTSDepacketizer: Depacketizer {
    public var framing: Framing? { .mpegTS }
    public private(set) var codec: VideoCodec?
    private var carry: [UInt8] = []
    private var pmtPID: Int?
    /// PSI sections dropped because their CRC_32 failed.
    private var crcErrors = 0
    /// PMT PIDs still to read while the stream to play is not found, and what those read held.
    private var candidatePMTs: [Int] = []
    private var streamsSeen: [String] = []
    private var refused = false
    /// The KLV metadata PID and its PES reassembly, when the PMT lists one.
    private var klvPID: Int?
    private var klv: MetadataPES?
    /// KLV time stamps waiting for the video PES of their PTS (at most ``maxPendingKLV``).
    private var pendingKLV: [(pts: UInt64, micros: UInt64)] = []
    static let maxPendingKLV = 16
    /// PTS of the video PES in progress.
    private var videoPTS: UInt64?
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
    /// Quiet time before the chunk being read, µs (the pause a cut unit reports).
    private var pauseBeforeChunkMicros: UInt64 = 0
    /// The PES in progress was ended by an idle gap since its last payload.
    private var idleEnded = false
    private var counters: [Metric: Int] = [:]
    private var saidStreams = false
    /// Whether a stuffed packet ends the PES (until this sender shows it stuffs inside one).
    private var trustsStuffing = true
    /// Times a PES went on, in sequence, after stuffing had ended it: the second one shows the
    /// muxer stuffs inside a PES (one alone may be a corrupt packet).
    private var stuffingInsidePES = 0
    /// Packets of that kind it takes to stop trusting stuffing, each after its own stuffed end.
    static let stuffingEvidence = 2
    /// PESs ended by stuffing since the last sign: after ``stuffingEvidenceForgotten`` of them
    /// (10 s at 30 fps) a lone old sign is forgotten.
    private var stuffedEndsSinceSign = 0
    static let stuffingEvidenceForgotten = 300
    /// A video PES has started: a payload with no PES to belong to is a drop from then on (before
    /// it, a join in the middle of one).
    private var pesSeen = false
    private var lastEndedByStuffing = false

    /// - Parameters:
    ///   - maxUnitBytes: cap on one NAL unit, bytes.
    ///   - idleFlushMicros: quiet time that ends the PES in progress on a live input, µs (0: never).
    ///   - program: `program_number` to play (nil: the first in the PAT).
    ///   - pid: elementary PID to play (nil: the first H.264/H.265 stream of the program).
    public init(maxUnitBytes: Int, idleFlushMicros: Int, program: Int? = nil, pid: Int? = nil) {
        scanner = AnnexBScanner(maxUnitBytes: maxUnitBytes)
        scanner.reopensCutUnits = idleFlushMicros > 0
        self.idleFlushMicros = idleFlushMicros
        wantProgram = program
        wantPID = pid
    }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        pauseBeforeChunkMicros = arrivalMicros - min(arrivalMicros, lastDataMicros)
        lastDataMicros = arrivalMicros
        if truncated { emit(.damage(lostPackets: 0)) }
        carry.append(contentsOf: chunk.bindMemory(to: UInt8.self))
        drain(arrivalMicros: arrivalMicros, final: false, emit: emit)
    }

    /// Passes on every whole packet in `carry`, once the packet size is known (`final`: the input
    /// ended, decide with what there is).
    private mutating func drain(arrivalMicros: UInt64, final: Bool, emit: (DepacketizerEvent) -> Void) {
        guard let size = packetSize(final: final, emit: emit) else { return }
        let (s, o) = (size.rawValue, size.packetOffset)
        var i = 0
        while carry.count - i >= s {
            guard carry[i + o] == 0x47 else {
                // Lost sync: skip to the next sync byte.
                counters[.junkBytes, default: 0] += 1
                i += 1
                continue
            }
            packet(carry[(i + o)..<(i + o + 188)], arrivalMicros: arrivalMicros, emit: emit)
            if size != .standard { counters[size == .timestamped ? .tsPacketsM2TS : .tsPacketsWithParity, default: 0] += 1 }
            i += s
        }
        carry.removeFirst(i)
    }

    /// The stream's packet size, told from its first bytes (188 when they fit no size: the loop
    /// then resynchronizes on sync bytes, as before); said once when it is not 188. Nil while
    /// too few bytes have come to tell. Until the input ends, only sync bytes in a row count, not
    /// the length of what came: the same bytes cut differently give the same size.
    private mutating func packetSize(final: Bool, emit: (DepacketizerEvent) -> Void) -> TSPacketSize? {
        if let size { return size }
        let found = carry.withUnsafeBytes { TSPacketSize.detect($0, wholePackets: final) }
        guard found != nil || final || carry.count >= 3 * 204 + 4 else { return nil }
        let size = found ?? .standard
        self.size = size
        if size != .standard { emit(.note("MPEG-TS with \(size.description)")) }
        return size
    }

    /// The packet size found (``TSPacketSize``), nil before.
    public private(set) var size: TSPacketSize?

    public func pollTimeoutMicros(default pollMicros: Int) -> Int {
        inPES && !idleEnded && idleFlushMicros > 0 ? idleFlushMicros : pollMicros
    }

    /// An idle gap ends the access unit, but not the PES: more of it may still come.
    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        guard inPES, !idleEnded, idleFlushMicros > 0, nowMicros >= lastDataMicros + UInt64(idleFlushMicros) else { return }
        scanner.flush(atMicros: nowMicros, reason: .idle) { emit(.unit($0)) }
        emit(.accessUnitEnd(.idleGap, atMicros: nowMicros))
        idleEnded = true
    }

    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if size == nil { drain(arrivalMicros: nowMicros, final: true, emit: emit) }
        if inPES { endPES(.endOfStream, atMicros: nowMicros, emit: emit) }
        emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros))
    }

    public var counts: [Metric: Int] {
        var c = counters
        let k = scanner.counters
        c[.zeroLengthNALUnits, default: 0] += k.zeroLengthUnits
        c[.oversizeNALUnits, default: 0] += k.oversizeUnits
        c[.junkBytes, default: 0] += k.junkBytes
        c[.tsPacketsDropped, default: 0] += crcErrors
        c[.idleFlushes, default: 0] += k.idleFlushes
        c[.cutNALUnits, default: 0] += k.prematureIdleFlushes
        c[.klvLocalSets, default: 0] += klv?.localSets ?? 0
        c[.malformedKLV, default: 0] += klv?.malformed ?? 0
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
        // In sequence with the last packet of its PID: a packet that may speak for the muxer.
        let inSequence = lastCC[pid].map { cc == ($0 + 1) & 0xF } ?? false
        if pid == videoPID, !continuityHolds(pid: pid, cc: cc, emit: emit) { return }
        let payload = p[off..<p.endIndex]
        if pusi && pmtPID == nil && candidatePMTs.contains(pid) { readPMT(payload, pmtPID: pid, emit: emit); return }
        switch pid {
        case 0: if pusi { readPAT(payload, emit: emit) }
        case pmtPID: if pusi { readPMT(payload, pmtPID: pid, emit: emit) }
        case klvPID:
            for item in klv?.push(payload, start: pusi) ?? [] { metadataArrived(item, emit: emit) }
        case videoPID:
            pes(payload, start: pusi, inSequence: inSequence, arrivalMicros: arrivalMicros, emit: emit)
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
    private mutating func section(_ payload: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let pointer = payload.first else { return nil }
        let start = payload.startIndex + 1 + Int(pointer)
        guard start + 3 <= payload.endIndex else { return nil }
        let length = Int(payload[start + 1] & 0x0F) << 8 | Int(payload[start + 2])
        guard length >= 9, start + 3 + length <= payload.endIndex else { return nil }
        // A section whose CRC_32 fails is dropped (§2.4.4.10): a corrupt PMT must not choose the PID.
        guard SectionCRC.of(payload[start..<(start + 3 + length)]) == 0 else { crcErrors += 1; return nil }
        return payload[start..<(start + 3 + length - 4)]   // without the CRC_32
    }

    private mutating func readPAT(_ payload: ArraySlice<UInt8>, emit: (DepacketizerEvent) -> Void) {
        guard pmtPID == nil, candidatePMTs.isEmpty, !refused, let sec = section(payload), sec.first == 0x00 else { return }
        var programs: [(number: Int, pid: Int)] = []
        var i = sec.startIndex + 8
        while i + 4 <= sec.endIndex {
            let program = Int(sec[i]) << 8 | Int(sec[i + 1])
            let pid = Int(sec[i + 2] & 0x1F) << 8 | Int(sec[i + 3])
            i += 4
            if program != 0 { programs.append((program, pid)) }   // 0: the network PID
        }
        candidatePMTs = programs.filter { wantProgram == nil || $0.number == wantProgram }.map(\.pid)
        if candidatePMTs.isEmpty, !programs.isEmpty {
            refuse("program \(wantProgram ?? 0) is not in the PAT; it lists program" + (programs.count > 1 ? "s " : " ")
                   + programs.map { String($0.number) }.joined(separator: ", "), emit: emit)
        }
    }

    /// One line and the feed fails: what was asked for is not in the stream.
    private mutating func refuse(_ reason: String, emit: (DepacketizerEvent) -> Void) {
        refused = true
        emit(.refuse("MPEG-TS: " + reason))
    }

    private mutating func readPMT(_ payload: ArraySlice<UInt8>, pmtPID pid: Int, emit: (DepacketizerEvent) -> Void) {
        guard let sec = section(payload), sec.first == 0x02, sec.count >= 12 else { return }
        let program = Int(sec[sec.startIndex + 3]) << 8 | Int(sec[sec.startIndex + 4])
        let streams = Self.elementaryStreams(sec)
        // The video PID in use while the PMT still lists it; else (a PMT that changed) its first video stream.
        let listed = streams.contains { $0.pid == videoPID && $0.codec != nil }
        let chosen = streams.first { s in s.codec != nil && (wantPID == nil ? (!listed || videoPID == s.pid) : wantPID == s.pid) }
        guard let chosen, let video = chosen.codec else {
            notInPMT(program: program, pmtPID: pid, streams: streams, emit: emit)
            return
        }
        if videoPID != chosen.pid { lastCC[chosen.pid] = nil }
        pmtPID = pid
        videoPID = chosen.pid
        codec = video
        if let k = streams.first(where: \.isKLV), klvPID != k.pid {
            klvPID = k.pid
            klv = MetadataPES(synchronous: k.type == 0x15)
        }
        if !saidStreams {
            saidStreams = true
            let others = streams.filter { $0.pid != chosen.pid }.map(\.description)
            emit(.note("MPEG-TS: \(video.displayName) on PID \(chosen.pid) of program \(program)"
                       + (others.isEmpty ? "" : "; also \(others.joined(separator: ", ")) (not played)")))
        }
    }

    /// A PMT without the stream wanted: once every candidate PMT has been read so, refuse.
    private mutating func notInPMT(program: Int, pmtPID: Int, streams: [ElementaryStream], emit: (DepacketizerEvent) -> Void) {
        guard pmtPID != self.pmtPID, let k = candidatePMTs.firstIndex(of: pmtPID) else { return }
        candidatePMTs.remove(at: k)
        streamsSeen.append("program \(program): " + (streams.isEmpty ? "no streams" : streams.map(\.description).joined(separator: ", ")))
        guard candidatePMTs.isEmpty, !refused else { return }
        let wanted = wantPID.map { "no H.264/H.265 stream on PID \($0)" } ?? "no H.264/H.265 stream"
        refuse("\(wanted) in the PMT\(streamsSeen.count > 1 ? "s" : ""); \(streamsSeen.joined(separator: "; "))", emit: emit)
    }

    /// An elementary stream listed in a PMT (§2.4.4.8).
    struct ElementaryStream: CustomStringConvertible {
        var pid: Int
        var type: UInt8
        /// KLV metadata: stream_type 0x06 or 0x15 with `KLVA` in a registration (0x05) or
        /// metadata (0x26) descriptor (MISB ST 1402).
        var isKLV = false
        var codec: VideoCodec? { type == 0x1B ? .h264 : type == 0x24 ? .h265 : nil }
        var description: String {
            String(format: "PID %d %@", pid, codec?.displayName ?? (isKLV ? "KLV" : String(format: "type 0x%02X", type)))
        }
    }

    /// True when descriptors carry the `KLVA` format identifier (SMPTE RA registration).
    static func mentionsKLVA(_ d: ArraySlice<UInt8>) -> Bool {
        let k = Array("KLVA".utf8)
        return d.count >= 4 && (d.startIndex...(d.endIndex - 4)).contains { d[$0..<($0 + 4)].elementsEqual(k) }
    }

    /// The elementary streams of a PMT section (without its CRC).
    static func elementaryStreams(_ sec: ArraySlice<UInt8>) -> [ElementaryStream] {
        let infoLength = Int(sec[sec.startIndex + 10] & 0x0F) << 8 | Int(sec[sec.startIndex + 11])
        var i = sec.startIndex + 12 + infoLength
        var streams: [ElementaryStream] = []
        while i + 5 <= sec.endIndex {
            let esInfo = Int(sec[i + 3] & 0x0F) << 8 | Int(sec[i + 4])
            let descriptors = sec[min(sec.endIndex, i + 5)..<min(sec.endIndex, i + 5 + esInfo)]
            let klv = (sec[i] == 0x06 || sec[i] == 0x15) && Self.mentionsKLVA(descriptors)
            streams.append(ElementaryStream(pid: Int(sec[i + 1] & 0x1F) << 8 | Int(sec[i + 2]), type: sec[i], isKLV: klv))
            i += 5 + esInfo
        }
        return streams
    }

    // MARK: - PES

    /// A KLV local set: passed on; its time stamp goes to the access unit of its PTS.
    private mutating func metadataArrived(_ item: (pts: UInt64?, metadata: PlatformMetadata), emit: (DepacketizerEvent) -> Void) {
        emit(.metadata(item.metadata))
        guard let micros = item.metadata.precisionTimeMicros else { return }
        if let p = item.pts, !(inPES && videoPTS == p) {
            pendingKLV.append((p, micros))
            if pendingKLV.count > Self.maxPendingKLV { pendingKLV.removeFirst() }
            return
        }
        emit(.captureTime(wallMicros: micros, source: .klv))
    }

    /// A video PES with `pts` began: a KLV time stamp waiting for it is its capture time.
    private mutating func videoPESStarted(pts: UInt64?, emit: (DepacketizerEvent) -> Void) {
        videoPTS = pts
        guard let pts, let k = pendingKLV.firstIndex(where: { $0.pts == pts }) else { return }
        emit(.captureTime(wallMicros: pendingKLV[k].micros, source: .klv))
        pendingKLV.removeSubrange(...k)
    }

    /// One payload of the video PID. `inSequence`: its continuity counter followed the last one's.
    private mutating func pes(_ payload: ArraySlice<UInt8>, start: Bool, inSequence: Bool, arrivalMicros: UInt64,
                              emit: (DepacketizerEvent) -> Void) {
        var data = payload
        if start {
            if inPES { endPES(.nextAccessUnit, atMicros: arrivalMicros, emit: emit) }
            // PES header (§2.4.3.6): 00 00 01, stream_id, PES_packet_length, flags, header length.
            guard let header = PESHeader(data) else {
                counters[.tsPacketsDropped, default: 0] += 1
                return
            }
            pesBytesLeft = header.payloadLength
            data = data[header.payloadStart...]
            inPES = true
            pesSeen = true
            videoPESStarted(pts: header.pts, emit: emit)
        }
        guard inPES else {
            if pesSeen { counters[.tsPacketsDropped, default: 0] += 1 }
            if lastEndedByStuffing && trustsStuffing { stuffedEndFollowed(inSequence: inSequence, emit) }
            return   // joined in the middle of a PES, or its start was lost: wait for the next start
        }
        if let left = pesBytesLeft { data = data.prefix(max(0, left)); pesBytesLeft = left - data.count }
        if idleEnded && !start { raiseIdleTime(emit) }
        idleEnded = false
        let outcome = data.withUnsafeBytes { raw in
            scanner.push(raw, arrivalMicros: arrivalMicros) { emit(.unit($0)) }
        }
        if let cutEnd = outcome.cutUnitLastByteMicros {
            emit(.cut(unitLastByteMicros: cutEnd, pauseMicros: pauseBeforeChunkMicros))
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
    /// picture. Wait twice as long from now on (the cut unit itself is repaired by the feed).
    private mutating func raiseIdleTime(_ emit: (DepacketizerEvent) -> Void) {
        guard idleFlushMicros < Self.maxIdleFlushMicros else { return }
        idleFlushMicros = min(Self.maxIdleFlushMicros, idleFlushMicros * 2)
        emit(.note("MPEG-TS: a pause inside a picture ended it early; pictures now end after \(idleFlushMicros / 1000) ms idle"))
    }

    /// More of a PES came after stuffing had ended it: the picture went on without this tail.
    /// In sequence, after two different stuffed ends: this muxer stuffs inside a PES, so PESs end
    /// by the next start (or idle) from now on. A corrupt packet (out of sequence, a lost start
    /// flag: one sign, however long the headless run after it) is only dropped and counted.
    private mutating func stuffedEndFollowed(inSequence: Bool, _ emit: (DepacketizerEvent) -> Void) {
        emit(.damage(lostPackets: 1))
        lastEndedByStuffing = false          // one sign per stuffed end
        guard inSequence else { return }
        stuffingInsidePES += 1
        stuffedEndsSinceSign = 0
        if stuffingInsidePES >= Self.stuffingEvidence {
            trustsStuffing = false
            emit(.note("MPEG-TS: this sender stuffs packets inside a PES; access units now end at the next PES start or an idle gap"))
        }
    }

    private mutating func endPES(_ rule: AccessUnit.Completion, atMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        lastEndedByStuffing = rule == .tsStuffing
        if rule == .tsStuffing {
            stuffedEndsSinceSign += 1
            if stuffedEndsSinceSign >= Self.stuffingEvidenceForgotten { stuffingInsidePES = 0 }
        }
        scanner.flush(atMicros: atMicros, reason: .endOfStream) { emit(.unit($0)) }
        emit(.accessUnitEnd(rule, atMicros: atMicros))
        inPES = false
        idleEnded = false
        pesBytesLeft = nil
    }
}
