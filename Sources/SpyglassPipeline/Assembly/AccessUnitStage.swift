/// NAL units in, access units out: chooses the codec (from `--codec`, the SDP, RTP or the NAL
/// headers), holds units until it is known, follows a sender that switches codec, and runs the
/// ``AccessUnitAssembler`` (picture boundaries from the slice headers, H.264 §7.4.1.2.4 and
/// H.265 §7.4.2.4.4).
///
/// A pure value: every decision comes out as an ``Event``.
///
/// Who names the codec, and how far it is believed:
/// - `--codec` is authoritative: the stream is decoded as that codec even when its parameter
///   sets are the other's (said once, as ``Event/codecMismatch(named:by:stream:following:)``).
/// - an SDP's `a=rtpmap` (and the RTP payload rules it chose) is a hint: a parameter set of the
///   other codec (``CodecDetector/decisive(_:)``) wins, the stage follows the stream and says so
///   once. The SDP's `sprop-*` parameter sets are used only for the codec they belong to.
/// - otherwise the NAL headers decide (``CodecDetector``), and a sender that switches codec is
///   followed.
import SpyglassBitstream
import SpyglassTransport
public struct AccessUnitStage {
    /// Who named a codec before the stream's parameter sets did.
    public enum CodecNamer: String, Sendable, CustomStringConvertible {
        /// `--codec`: authoritative.
        case option = "--codec"
        /// An SDP's `a=rtpmap` (`--sdp`, or an RTSP server's DESCRIBE): a hint.
        case sdp = "the SDP"
        public var description: String { rawValue }
    }

    /// What the stage decided or produced.
    public enum Event {
        /// A complete access unit, with the parameter sets in force when it completed.
        case accessUnit(AccessUnit, ParameterSetStore)
        /// The codec is known (`detected`: from the NAL headers, not from an option).
        case codecChosen(VideoCodec, detected: Bool)
        /// A parameter set of the other codec arrived: the sender switched. The last access
        /// unit of the old codec was emitted before this event.
        case codecChanged(from: VideoCodec, to: VideoCodec)
        /// A flush closed a picture between two of its slices (the fragment went on damaged).
        case pictureSplit
        /// An SPS changed under the same id (one line, for the log).
        case parameterSetChange(String)
        /// The codec `by` named ("the SDP", "--codec") is not the stream's: a parameter set of
        /// `stream` came. `following`: the stage decodes `stream` (an SDP is a hint), or keeps
        /// `named` (`--codec` is authoritative). At most once per run.
        case codecMismatch(named: VideoCodec, by: CodecNamer, stream: VideoCodec, following: Bool)
    }

    private let forcedCodec: VideoCodec?
    private let sdp: SessionDescription?
    private let maxAccessUnitBytes: Int
    private let maxPictureWidth: Int
    private let maxPictureHeight: Int
    private var detector = CodecDetector()
    private var held = UnitsBeforeCodec()
    /// A transport capture time that came while the codec was unknown (for the held units).
    private var heldCapture: (wallMicros: UInt64, source: CaptureSource)?
    private var assembler: AccessUnitAssembler?
    private var reportedChanges = 0
    private var retired: [Metric: Int] = [:]
    private var mismatchSaid = false

    /// - Parameter settings: `--codec`, `--sdp`, `--max-au-mb`, `--max-size`.
    public init(settings: AssemblySettings = AssemblySettings()) {
        forcedCodec = settings.codec
        sdp = settings.sdp
        maxAccessUnitBytes = settings.maxAccessUnitBytes
        maxPictureWidth = settings.maxPictureWidth
        maxPictureHeight = settings.maxPictureHeight
    }

    /// The codec in use, once known.
    public var codec: VideoCodec? { assembler?.codec }
    /// Parameter sets seen so far for the codec in use.
    public var parameterSets: ParameterSetStore? { assembler?.parameterSets }
    /// Index the access unit in progress will get.
    public var nextIndex: Int { assembler?.nextIndex ?? 0 }

    /// Takes one NAL unit.
    /// - Parameters:
    ///   - unit: from the depacketizer.
    ///   - codecHint: the codec the depacketizer knows (RTP), if any.
    ///   - emit: receives the events, in order.
    public mutating func push(_ unit: NALUnit, codecHint: VideoCodec?, emit: (Event) -> Void) {
        if let forced = forcedCodec, !mismatchSaid, let other = CodecDetector.decisive(unit.bytes), other != forced {
            mismatchSaid = true
            emit(.codecMismatch(named: forced, by: .option, stream: other, following: false))
        }
        if assembler == nil {
            guard let codec = forcedCodec ?? codecHint ?? sdp?.codec ?? detector.observe(unit.bytes) else {
                held.append(unit)
                return
            }
            start(codec, detected: forcedCodec == nil, emit: emit)
        }
        if forcedCodec == nil, let other = CodecDetector.decisive(unit.bytes), let current = assembler?.codec, other != current {
            switchCodec(to: other, atMicros: unit.firstByteMicros, emit: emit)
        }
        assemble(unit, emit: emit)
    }

    /// The depacketizer says the access unit in progress is complete.
    /// - Parameters:
    ///   - rule: what ended it (marker bit, idle gap, burst end, end of stream).
    ///   - atMicros: monotonic time the end became known, µs.
    ///   - minimumSlices: with a burst end, close only a picture with at least this many slices.
    public mutating func end(by rule: AccessUnit.Completion, atMicros: UInt64, minimumSlices: Int?, emit: (Event) -> Void) {
        if rule == .endOfStream { decideCodecIfUndecided(emit: emit) }
        guard let pendingSlices = assembler?.pendingSlices else { return }
        if let minimumSlices, pendingSlices < minimumSlices { return }
        if let au = assembler?.flush(atMicros: atMicros, reason: rule), let sets = assembler?.parameterSets {
            emit(.accessUnit(au, sets))
        }
    }

    /// The transport's capture time for the access unit in progress (RTCP, KLV); an SEI stamp wins.
    /// - Parameters:
    ///   - wallMicros: µs since the Unix epoch.
    ///   - source: `rtcp` or `klv`.
    public mutating func noteCaptureTime(wallMicros: UInt64, source: CaptureSource) {
        guard assembler != nil else { heldCapture = (wallMicros, source); return }
        assembler?.noteCaptureTime(wallMicros: wallMicros, source: source)
    }

    /// Bytes were lost inside the access unit in progress.
    public mutating func markDamaged() { assembler?.markDamaged() }

    /// A NAL unit went on cut. Marks the access unit in progress damaged when it holds that unit.
    /// - Returns: false when the cut unit's access unit has already gone out (to be counted there).
    public mutating func noteCut(unitLastByteMicros: UInt64) -> Bool {
        guard assembler?.pendingHasUnit(endingAt: unitLastByteMicros) == true else { return false }
        assembler?.markCut()
        return true
    }

    /// The whole version of a cut unit: replaces it in the access unit in progress.
    /// - Returns: false when that access unit has already gone out.
    public mutating func replacePending(_ unit: NALUnit, endingAt micros: UInt64) -> Bool {
        assembler?.replacePending(unit, endingAt: micros) ?? false
    }

    /// Drops the access unit in progress (a sender restart). Parameter sets are kept.
    public mutating func discardPending() { assembler?.discardPending() }

    /// Bytes of the units held while the codec is unknown.
    public var heldBytes: Int { held.bytes }

    /// Lets go of the units held while the codec is unknown (the feed went silent: what comes
    /// next starts a new stream). Counted as units without a picture.
    public mutating func forgetHeldUnits() { held.forget() }

    /// What assembly counted, for the run (monotonic across codec switches).
    /// Units let go before the codec was known count as units without a picture.
    public var counts: [Metric: Int] {
        var c = assemblyCounts
        if held.dropped > 0 { c[.unitsWithoutPicture, default: 0] += held.dropped }
        return c
    }

    /// What the assemblers counted, this one and those a codec switch replaced.
    private var assemblyCounts: [Metric: Int] {
        var c = retired
        if let a = assembler {
            let k = a.counters
            for (m, v) in [(Metric.nalUnits, k.nalUnits), (.accessUnits, k.accessUnits), (.invalidNALUnits, k.invalidUnits),
                           (.oversizeAccessUnits, k.oversizeAccessUnits), (.unitsWithoutPicture, k.unitsWithoutPicture),
                           (.refusedAccessUnits, k.refusedAccessUnits), (.picturesSplit, k.picturesSplit),
                           (.invalidParameterSets, a.parameterSets.invalidParameterSets),
                           (.refusedPictureSize, a.parameterSets.oversizePictures)] {
                c[m, default: 0] += v
            }
        }
        return c
    }

    // MARK: - private

    private mutating func start(_ codec: VideoCodec, detected: Bool, emit: (Event) -> Void) {
        var asm = AccessUnitAssembler(codec: codec, maxAccessUnitBytes: maxAccessUnitBytes,
                                      maxPictureWidth: maxPictureWidth, maxPictureHeight: maxPictureHeight)
        // Parameter sets from an SDP come first, as if in-band (only those of this codec).
        for ps in sdp?.parameterSets(for: codec) ?? [] { _ = asm.push(NALUnit(bytes: ps)) }
        if let c = heldCapture { asm.noteCaptureTime(wallMicros: c.wallMicros, source: c.source) }
        heldCapture = nil
        assembler = asm
        reportedChanges = 0
        emit(.codecChosen(codec, detected: detected))
        if forcedCodec == nil, let named = sdp?.codec, named != codec, !mismatchSaid {
            mismatchSaid = true
            emit(.codecMismatch(named: named, by: .sdp, stream: codec, following: true))
        }
        for u in held.take() { assemble(u, emit: emit) }
    }

    /// - Parameter atMicros: when the switch became known: the first byte of the other codec's
    ///   parameter set (monotonic µs). A pure value reads no clock.
    private mutating func switchCodec(to codec: VideoCodec, atMicros: UInt64, emit: (Event) -> Void) {
        guard let old = assembler?.codec else { return }
        // Finish the old stream's last picture, keep its counts, then start clean.
        if let au = assembler?.flush(atMicros: atMicros, reason: .endOfStream),
           let sets = assembler?.parameterSets {
            emit(.accessUnit(au, sets))
        }
        retired = assemblyCounts
        assembler = nil
        emit(.codecChanged(from: old, to: codec))
        start(codec, detected: true, emit: emit)
    }

    private mutating func decideCodecIfUndecided(emit: (Event) -> Void) {
        guard assembler == nil, !held.isEmpty else { return }
        var d = CodecDetector(maxUnits: 0)
        var codec: VideoCodec = .h264
        for u in held.units { if let c = d.observe(u.bytes) { codec = c; break } }
        start(codec, detected: true, emit: emit)
    }

    private mutating func assemble(_ unit: NALUnit, emit: (Event) -> Void) {
        var split = false
        let au = assembler?.push(unit) { split = true }
        if split { emit(.pictureSplit) }
        guard let sets = assembler?.parameterSets else { return }   // start(_:) made it
        if sets.changeCount > reportedChanges {
            for line in sets.changes.suffix(min(sets.changes.count, sets.changeCount - reportedChanges)) {
                emit(.parameterSetChange(line))
            }
            reportedChanges = sets.changeCount
        }
        if let au { emit(.accessUnit(au, sets)) }
    }
}
