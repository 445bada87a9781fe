import Foundation
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
import SpyglassFeed

/// What a stream holds: codec, format, GOP structure, slices, B-frames, SEI, bitrate.
/// Fed with every access unit the assembler completes (``observe(_:)``); `spyglass probe`
/// prints ``report`` as text or JSON.
public struct StreamProbe: Sendable {
    /// The findings, as `spyglass probe --json` writes them.
    public struct Report: Codable, Sendable {
        public var codec: String?
        public var profile: String?
        public var level: Double?
        public var width: Int?
        public var height: Int?
        public var bitDepth: Int?
        public var chroma: String?
        /// Frame rate from VUI timing (nil when the SPS has none).
        public var frameRateVUI: Double?
        /// Frame rate measured from arrival times (live sources; nil for files read at once).
        public var frameRateMeasured: Double?
        public var accessUnits = 0
        /// IDR (H.264) / IRAP (H.265) pictures, and the distance between them in pictures.
        public var keyframes = 0
        public var keyframeInterval: [Int] = []
        /// Pictures with a recovery point SEI; intra refresh = recovery points but no IDR after the first.
        public var recoveryPoints = 0
        public var intraRefresh = false
        /// H.265: CRA pictures followed by RASL pictures (open GOP).
        public var openGOP = false
        public var slicesPerPicture: [Int] = []
        public var bFrames = false
        /// `max_num_reorder_frames` / `sps_max_num_reorder_pics` from the SPS, when signalled.
        public var reorderDepth: Int?
        /// SEI payload types seen, with counts (5 = user data unregistered, 6 = recovery point, …).
        public var seiPayloadTypes: [String: Int] = [:]
        /// Access units with an ST 0604 precision time stamp.
        public var timestamped = 0
        /// Access units by where their capture time came from (`sei`, `rtcp`, `klv`).
        public var captureSources: [String: Int] = [:]
        /// KLV local sets (MISB ST 0601) read, and the last one's position and heading.
        public var klvLocalSets = 0
        public var platform: PlatformMetadata?
        public var parameterSetChanges: [String] = []
        public var bytes = 0
        public var durationSeconds = 0.0
        public var bitrateKbps: Double?
        /// Live sources: datagram sizes and RTP loss.
        public var datagrams: Int?
        public var datagramSizeMin: Int?
        public var datagramSizeMax: Int?
        public var datagramSizeMean: Double?
        public var rtp: Bool?
        public var rtpLost: Int?
        /// How the video was carried: a ``Framing`` name ("annex-b", "rtp", "mpeg-ts", "rtp-mpegts").
        public var framing: String?
        /// MPEG-TS: the packet size, bytes (188, 192 or 204; ``TSPacketSize``).
        public var tsPacketBytes: Int?
        /// What was wrong: invalid NAL units, junk, decode errors, damaged access units.
        public var errors: [String] = []
        /// What arrived at all: datagrams or reads (``receivedAre``) and bytes, and for how long it was read, s.
        public var received = 0
        /// What ``received`` counts (``FeedSummary/countsAre``): "datagrams" (UDP), "packets"
        /// (RTSP, a packet capture) or "reads" (a byte stream: TCP, SRT, a pipe, a file).
        public var receivedAre = "reads"
        public var receivedBytes = 0
        public var readSeconds = 0.0
        /// Datagrams that were not RTP on an RTP input.
        public var notRTP = 0
    }

    public private(set) var report = Report()
    private var lastKeyframe: Int?
    private var sliceCounts = Set<Int>()
    private var firstArrival: UInt64?
    private var lastArrival: UInt64?
    private var sawRASLAfterCRA = false
    private var afterCRA = false
    private var idrAfterFirst = false

    public init() {}

    /// Looks at one KLV local set of the stream's metadata.
    public mutating func observe(metadata: PlatformMetadata) {
        report.klvLocalSets += 1
        var m = metadata
        m.precisionTimeMicros = nil   // the position is what is shown; times are counted per access unit
        if m != PlatformMetadata() { report.platform = m }
    }

    /// Looks at one access unit (after the assembler).
    public mutating func observe(_ au: AccessUnit, store: ParameterSetStore) {
        report.codec = au.codec.displayName
        report.accessUnits += 1
        report.bytes += au.byteCount
        if firstArrival == nil { firstArrival = au.firstByteMicros }
        lastArrival = au.lastByteMicros
        var slices = 0
        var recovery = false
        var cra = false
        for u in au.units {
            guard let h = u.header ?? NALUnitHeader(codec: au.codec, bytes: u.bytes) else { continue }
            if h.isVCL {
                slices += 1
                if au.codec == .h264, let s = store.sliceInfo(header: h, unit: u.bytes).h264, s.sliceType % 5 == 1 { report.bFrames = true }
                if au.codec == .h265 {
                    if h.type == 21 { cra = true }
                    if h.type == 8 || h.type == 9 { if afterCRA { sawRASLAfterCRA = true } }
                    if let s = store.sliceInfo(header: h, unit: u.bytes).h265, s.sliceType == 0 { report.bFrames = true }
                }
            }
            if h.kind == .sei || h.kind == .suffixSEI {
                let rbsp = RBSP.unescape(u.bytes.dropFirst(h.size))
                for m in SEIMessages(rbsp: rbsp) {
                    report.seiPayloadTypes[String(m.payloadType), default: 0] += 1
                    if m.payloadType == 6 { recovery = true }
                }
            }
        }
        if cra { afterCRA = true }
        if sawRASLAfterCRA { report.openGOP = true }
        sliceCounts.insert(slices)
        if au.captureWallMicros != nil {
            report.timestamped += 1
            report.captureSources[au.captureSource.rawValue, default: 0] += 1
        }
        if recovery { report.recoveryPoints += 1 }
        if au.isRandomAccessPoint {
            if let k = lastKeyframe { report.keyframeInterval.append(report.accessUnits - 1 - k); idrAfterFirst = true }
            lastKeyframe = report.accessUnits - 1
            report.keyframes += 1
        }
        report.intraRefresh = report.recoveryPoints > 1 && !idrAfterFirst
        report.slicesPerPicture = sliceCounts.sorted()
        if let f = store.latestFormat {
            report.width = f.width; report.height = f.height
            report.bitDepth = f.bitDepth; report.chroma = f.chromaName
            report.frameRateVUI = f.frameRate
            report.reorderDepth = f.maxNumReorderFrames
            report.profile = Self.profileName(codec: f.codec, idc: f.profileIdc)
            report.level = f.codec == .h264 ? Double(f.levelIdc) / 10 : Double(f.levelIdc) / 30
        }
        report.parameterSetChanges = store.changes
    }

    /// Adds what the rest of the pipeline counted, and finishes the figures.
    /// - Parameter captureSpanSeconds: for a packet capture, the time its datagrams span by their
    ///   own time stamps (the file is read at once, so arrival times say nothing).
    public mutating func finish(summary s: FeedSummary, live: Bool, datagramSizes: [Int],
                                parameterSets: ParameterSetStore? = nil, captureSpanSeconds: Double? = nil) {
        // Parameter sets without any picture still say what the stream would be.
        if report.codec == nil, let store = parameterSets, let f = store.latestFormat {
            report.codec = f.codec.displayName
            report.width = f.width; report.height = f.height
            report.bitDepth = f.bitDepth; report.chroma = f.chromaName
            report.frameRateVUI = f.frameRate
            report.reorderDepth = f.maxNumReorderFrames
            report.profile = Self.profileName(codec: f.codec, idc: f.profileIdc)
            report.level = f.codec == .h264 ? Double(f.levelIdc) / 10 : Double(f.levelIdc) / 30
        }
        if let span = captureSpanSeconds, span > 0, report.accessUnits > 1 {
            report.durationSeconds = span
            report.frameRateMeasured = Double(report.accessUnits - 1) / span
        } else if let a = firstArrival, let b = lastArrival, b > a, live, report.accessUnits > 1 {
            report.durationSeconds = Double(b - a) / 1e6
            report.frameRateMeasured = Double(report.accessUnits - 1) / report.durationSeconds
        } else if let fps = report.frameRateVUI, fps > 0 {
            report.durationSeconds = Double(report.accessUnits) / fps
        }
        if report.durationSeconds > 0 { report.bitrateKbps = Double(report.bytes) * 8 / report.durationSeconds / 1000 }
        if live && !datagramSizes.isEmpty {
            report.datagrams = datagramSizes.count
            report.datagramSizeMin = datagramSizes.min()
            report.datagramSizeMax = datagramSizes.max()
            report.datagramSizeMean = Double(datagramSizes.reduce(0, +)) / Double(datagramSizes.count)
        }
        if s.rtp { report.rtp = true; report.rtpLost = s.datagramsLost }
        let ts = s.tsPackets > 0
        report.framing = (s.rtp ? (ts ? Framing.rtpMPEGTS : .rtp) : (ts ? .mpegTS : .annexB)).rawValue
        report.tsPacketBytes = s.tsPacketBytes
        report.received = s.datagrams
        report.receivedAre = s.countsAre
        report.receivedBytes = s.bytes
        report.readSeconds = s.durationSeconds
        report.notRTP = s.notRTP
        var e: [String] = []
        if s.invalidNALUnits > 0 { e.append("\(s.invalidNALUnits) invalid NAL units (forbidden_zero_bit)") }
        if s.junkBytes > 0 { e.append("\(s.junkBytes) bytes outside any NAL unit") }
        if s.invalidParameterSets > 0 { e.append("\(s.invalidParameterSets) malformed parameter sets") }
        if s.refusedPictureSize > 0 { e.append("\(s.refusedPictureSize) SPS over the picture-size cap") }
        if s.decodeErrors > 0 { e.append("\(s.decodeErrors) decode errors") }
        if s.concealedFrames > 0 { e.append("\(s.concealedFrames) concealed pictures") }
        if s.malformedKLV > 0 { e.append("\(s.malformedKLV) malformed KLV payloads") }
        if s.damagedAccessUnits > 0 { e.append("\(s.damagedAccessUnits) damaged access units") }
        if s.datagramsLost > 0 { e.append("\(s.datagramsLost) RTP packets lost") }
        if s.truncatedDatagrams > 0 { e.append("\(s.truncatedDatagrams) truncated datagrams") }
        if s.prematureIdleFlushes > 0 { e.append("\(s.prematureIdleFlushes) NAL unit\(s.prematureIdleFlushes == 1 ? "" : "s") cut by an idle flush") }
        if report.accessUnits == 0 { e.append("no picture (no access unit with a slice)") }
        report.errors = e
    }

    static func profileName(codec: VideoCodec, idc: Int) -> String {
        if codec == .h264 {
            switch idc {
            case 66: return "Baseline"; case 77: return "Main"; case 88: return "Extended"; case 100: return "High"
            case 110: return "High 10"; case 122: return "High 4:2:2"; case 244: return "High 4:4:4 Predictive"
            default: return "profile_idc \(idc)"
            }
        }
        switch idc {
        case 1: return "Main"; case 2: return "Main 10"; case 3: return "Main Still Picture"; case 4: return "Range extensions"
        default: return "general_profile_idc \(idc)"
        }
    }

    /// The report for people. With no parameter set seen it says so, and what did arrive, rather
    /// than print a picture format it does not know.
    public var text: String {
        let r = report
        var lines: [String] = []
        func add(_ k: String, _ v: String) { lines.append(k.padding(toLength: 22, withPad: " ", startingAt: 0) + v) }
        guard r.width != nil else {
            let seconds = String(format: "%.1f s", r.readSeconds)
            if r.received == 0 {
                add("received", "nothing: 0 \(r.receivedAre) arrived in \(seconds)")
            } else {
                add("received", "\(r.received) \(r.receivedAre), \(r.receivedBytes) bytes in \(seconds)"
                    + (r.notRTP > 0 ? ", \(r.notRTP) of them not RTP" : ""))
                add("parameter sets", "none seen (no SPS/PPS\(r.codec == "H.265" ? "/VPS" : "")): the format is unknown")
                add("access units", "\(r.accessUnits)")
            }
            add("errors", r.errors.isEmpty ? "none" : r.errors.joined(separator: "; "))
            return lines.joined(separator: "\n")
        }
        add("codec", "\(r.codec ?? "?") \(r.profile ?? "") level \(r.level.map { String(format: "%.1f", $0) } ?? "?")")
        add("picture", "\(r.width ?? 0)x\(r.height ?? 0), \(r.chroma ?? "?"), \(r.bitDepth ?? 0)-bit")
        add("frame rate", "VUI " + (r.frameRateVUI.map { String(format: "%.3f fps", $0) } ?? "none")
            + (r.frameRateMeasured.map { String(format: ", measured %.2f fps", $0) } ?? ""))
        add("access units", "\(r.accessUnits)")
        let gop = r.keyframeInterval.isEmpty ? "" : " every \(Set(r.keyframeInterval).sorted().map(String.init).joined(separator: "/")) pictures (decode order)"
        add("keyframes", "\(r.keyframes) IDR/IRAP\(gop)")
        add("recovery points", "\(r.recoveryPoints)" + (r.intraRefresh ? " (intra refresh: no IDR after the first picture)" : ""))
        add("open GOP", r.openGOP ? "yes (CRA with RASL pictures)" : "no")
        add("slices per picture", r.slicesPerPicture.map(String.init).joined(separator: ", "))
        add("B-frames", (r.bFrames ? "yes" : "no") + (r.reorderDepth.map { ", reorder depth \($0)" } ?? ", reorder depth not signalled"))
        add("SEI types", r.seiPayloadTypes.isEmpty ? "none" : r.seiPayloadTypes.keys.sorted { Int($0)! < Int($1)! }
            .map { "\($0)×\(r.seiPayloadTypes[$0]!)" }.joined(separator: ", "))
        let names = ["sei": "ST 0604 precision time stamp SEI", "rtcp": "RTCP sender reports", "klv": "KLV Precision Time Stamp (ST 0601 tag 2)",
                     "rtp-ext": "RTP header extension (RFC 6051 NTP-64 or abs-capture-time)"]
        add("time stamps", r.captureSources.isEmpty ? "none"
            : r.captureSources.keys.sorted().map { "\(names[$0] ?? $0) in \(r.captureSources[$0]!) access units" }.joined(separator: "; "))
        if let n = r.tsPacketBytes, let size = TSPacketSize(rawValue: n) { add("MPEG-TS", size.description) }
        if r.klvLocalSets > 0 {
            add("KLV (MISB ST 0601)", "\(r.klvLocalSets) local sets" + (r.platform?.positionText.map { "; platform \($0)" } ?? ""))
        }
        add("bitrate", r.bitrateKbps.map { String(format: "%.0f kbit/s over %.1f s", $0, r.durationSeconds) } ?? "unknown")
        if let n = r.datagrams {
            add(r.receivedAre, "\(n), \(r.datagramSizeMin ?? 0)–\(r.datagramSizeMax ?? 0) bytes (mean \(String(format: "%.0f", r.datagramSizeMean ?? 0)))"
                + (r.rtp == true ? ", RTP\(r.framing == Framing.rtpMPEGTS.rawValue ? " carrying MPEG-TS" : ""), \(r.rtpLost ?? 0) lost"
                   : r.framing == Framing.mpegTS.rawValue ? ", MPEG-TS" : ", raw Annex B"))
        }
        for c in r.parameterSetChanges { add("change", c) }
        add("errors", r.errors.isEmpty ? "none" : r.errors.joined(separator: "; "))
        return lines.joined(separator: "\n")
    }
}
