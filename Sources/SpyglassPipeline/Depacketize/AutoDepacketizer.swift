/// Chooses the ingest format from the first chunk (``DepacketizerRegistry``) and then passes
/// everything to it. Until the first chunk it has nothing to say.
///
/// A sender that restarts with another framing on the same UDP port is followed: once
/// ``redecideAfter`` datagrams do not fit the framing in use (not RTP on an RTP input, RTP on a
/// raw one, MPEG-TS on either) with never three fitting ones in a row between them, and those
/// datagrams carry a stream of another framing (``FramingEvidence``: RTP packets of one SSRC in
/// sequence, Annex B start codes, MPEG-TS sync bytes), the framing is decided again, the feed
/// restarts, and those datagrams are replayed into the new framing. A run of misfits
/// that shows no other framing is garbage (a flood, a stray sender): the framing stays, and the
/// run is counted (``Metric/garbageRuns``), so that random datagrams can never flip the framing
/// back and forth. Each change is counted (``Metric/framingChanges``). (`--rtp` and `--raw` fix
/// the framing.)
import SpyglassBitstream
import SpyglassTransport
public struct AutoDepacketizer: Depacketizer {
    private var inner: (any Depacketizer)?
    private let settings: DepacketizerSettings
    private let datagrams: Bool
    private let idleFlushMicros: Int
    /// The datagrams since a run of misfits began (at most ``redecideAfter`` misfits and the
    /// fitting ones between them): the new framing's are replayed into it when it is decided,
    /// so that its first picture is not lost.
    private var misfits: [(bytes: [UInt8], arrivalMicros: UInt64, truncated: Bool)] = []
    private var misfitCount = 0
    private var fitsInARow = 0
    private var retired: [Metric: Int] = [:]
    private var judged = (changes: 0, garbageRuns: 0)
    /// RTCP that came before the framing was decided (a sender report before the first RTP
    /// packet): given to the RTP depacketizer once chosen, dropped otherwise. At most ``heldRTCPMax``.
    private var heldRTCP: [(bytes: [UInt8], arrivalMicros: UInt64)] = []
    static let heldRTCPMax = 8
    /// Datagrams in a row that must not fit before the framing is judged again.
    public static let redecideAfter = 30

    /// - Parameters:
    ///   - settings: `--rtp`/`--raw`, codec, SDP, caps.
    ///   - datagrams: the source delivers datagrams (only then can RTP be detected).
    ///   - idleFlushMicros: the Annex B idle-flush time for this source, µs (0 for files).
    public init(settings: DepacketizerSettings, datagrams: Bool, idleFlushMicros: Int) {
        self.settings = settings
        self.datagrams = datagrams
        self.idleFlushMicros = idleFlushMicros
    }

    public var framing: Framing? { inner?.framing }
    public var codec: VideoCodec? { inner?.codec }

    public mutating func push(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool,
                              emit: (DepacketizerEvent) -> Void) {
        if let current = inner?.framing, datagrams, settings.transport == .auto,
           judge(chunk, arrivalMicros: arrivalMicros, truncated: truncated, current: current, emit: emit) {
            return
        }
        if inner == nil, datagrams, RTCPPacket.looksLikeRTCP(chunk) {
            if heldRTCP.count < Self.heldRTCPMax { heldRTCP.append((Array(chunk.bindMemory(to: UInt8.self)), arrivalMicros)) }
            return
        }
        if inner == nil {
            let first = Array(chunk.bindMemory(to: UInt8.self).prefix(4 * 204 + 4))[...]
            start(DepacketizerRegistry.choose(first: first, datagrams: datagrams, settings: settings), emit: emit)
        }
        inner?.push(chunk, arrivalMicros: arrivalMicros, truncated: truncated, emit: emit)
    }

    /// Keeps a run of misfits and judges it once it is long enough.
    /// - Returns: true when the framing changed (the chunk was replayed into the new one).
    private mutating func judge(_ chunk: UnsafeRawBufferPointer, arrivalMicros: UInt64, truncated: Bool, current: Framing,
                                emit: (DepacketizerEvent) -> Void) -> Bool {
        let fits = Self.fits(chunk, current)
        fitsInARow = fits ? fitsInARow + 1 : 0
        if fitsInARow >= 3 {
            misfits.removeAll()
            misfitCount = 0
            return false
        }
        guard !fits || !misfits.isEmpty else { return false }
        // Once a run of misfits starts, every datagram is kept (a raw stream's middle
        // datagrams may look like RTP by chance) until three fit in a row.
        misfits.append((Array(chunk.bindMemory(to: UInt8.self)), arrivalMicros, truncated))
        if !fits { misfitCount += 1 }
        guard misfitCount >= Self.redecideAfter else { return false }
        let run = misfits
        misfits.removeAll()
        misfitCount = 0
        guard let format = DepacketizerRegistry.formats.first(where: { $0.framing != current && FramingEvidence.shows($0.framing, in: run.map(\.bytes)) }) else {
            judged.garbageRuns += 1
            return false
        }
        judged.changes += 1
        for (m, v) in inner?.counts ?? [:] { retired[m, default: 0] += v }
        inner = nil
        emit(.restart(reason: "the sender's framing changed (\(Self.redecideAfter) datagrams in a row were not \(current.rawValue), and they carry \(format.framing.rawValue))"))
        start(format, emit: emit)
        // All of the run, as it came: a raw stream's middle datagrams may look like RTP by chance.
        for d in run {
            d.bytes.withUnsafeBytes { inner?.push($0, arrivalMicros: d.arrivalMicros, truncated: d.truncated, emit: emit) }
        }
        return true
    }

    /// Makes the depacketizer of `format`, says what was detected, and gives it held RTCP.
    private mutating func start(_ format: DepacketizerRegistry.Format, emit: (DepacketizerEvent) -> Void) {
        inner = format.make(settings, datagrams, idleFlushMicros)
        if let note = format.framing.detectedNote(forced: settings.transport != .auto) { emit(.note(note)) }
        giveHeldRTCP(format.framing == .rtp, emit: emit)
    }

    private mutating func giveHeldRTCP(_ wanted: Bool, emit: (DepacketizerEvent) -> Void) {
        let held = heldRTCP
        heldRTCP.removeAll()
        guard wanted else { return }
        for d in held {
            d.bytes.withUnsafeBytes { inner?.push($0, arrivalMicros: d.arrivalMicros, truncated: false, emit: emit) }
        }
    }

    /// True when a datagram fits `framing` (RTP: version 2 with a dynamic payload type;
    /// RTP/MP2T: version 2 with payload type 33; Annex B: anything that is none of these).
    static func fits(_ chunk: UnsafeRawBufferPointer, _ framing: Framing) -> Bool {
        let rtpTS = chunk.count >= 12 && chunk[0] >> 6 == 2 && chunk[1] & 0x7F == RTPMPEGTSDepacketizer.payloadType
        if framing == .rtpMPEGTS || rtpTS { return framing == .rtpMPEGTS && rtpTS }
        if looksLikeMPEGTS(chunk) || continuesMPEGTS(chunk) { return framing == .mpegTS }
        if framing == .mpegTS { return false }
        if RTCPPacket.looksLikeRTCP(chunk) { return framing == .rtp }
        let rtp = RTPPacket.looksLikeRTP(Array(chunk.bindMemory(to: UInt8.self).prefix(12))[...])
        return framing == .rtp ? rtp : !rtp
    }

    /// True when `chunk` starts with MPEG-TS packets of 188, 192 or 204 bytes, each with its sync
    /// byte 0x47 in place (``TSPacketSize/detect(_:)``): a whole number of packets (a datagram),
    /// or at least three in a row (a byte stream).
    static func looksLikeMPEGTS(_ chunk: UnsafeRawBufferPointer) -> Bool {
        TSPacketSize.detect(chunk) != nil
    }

    /// True when a datagram carries MPEG-TS cut at any byte: a sync byte 0x47 within its first
    /// 188 bytes and again every 188 bytes to its end (at least twice). ffmpeg's `-f mpegts
    /// udp://` sends 1472-byte datagrams by default (7 packets and 156 bytes of the next), so
    /// only about one datagram in 25 starts with a packet; the demultiplexer carries the cut
    /// packets over.
    static func continuesMPEGTS(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let b = chunk.bindMemory(to: UInt8.self)
        guard b.count >= 188 + 1 else { return false }
        return (0..<188).contains { o in
            b[o] == 0x47 && o + 188 < b.count && stride(from: o, to: b.count, by: 188).allSatisfy { b[$0] == 0x47 }
        }
    }

    public func pollTimeoutMicros(default pollMicros: Int) -> Int { inner?.pollTimeoutMicros(default: pollMicros) ?? pollMicros }
    public mutating func tick(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) { inner?.tick(nowMicros: nowMicros, emit: emit) }
    public mutating func finish(nowMicros: UInt64, emit: (DepacketizerEvent) -> Void) {
        if inner == nil { emit(.accessUnitEnd(.endOfStream, atMicros: nowMicros)); return }
        inner?.finish(nowMicros: nowMicros, emit: emit)
    }
    public mutating func noteAccessUnit(slices: Int) { inner?.noteAccessUnit(slices: slices) }
    public mutating func notePictureSplit() { inner?.notePictureSplit() }
    public var counts: [Metric: Int] {
        var c = retired
        c[.framingChanges] = judged.changes
        c[.garbageRuns] = judged.garbageRuns
        for (m, v) in inner?.counts ?? [:] { c[m, default: 0] += v }
        return c
    }
}
