/// Groups NAL units into access units, one step at a time.
///
/// Boundaries follow ITU-T H.264 §7.4.1.2.3 and H.265 §7.4.2.4.4: after the last VCL unit of a
/// picture, the next AUD, parameter set, (prefix) SEI or reserved prefix type, or the first VCL
/// unit of a new picture (H.264 §7.4.1.2.4; H.265 `first_slice_segment_in_pic_flag`), starts a
/// new access unit. Filler data, suffix SEI, end of sequence and end of bitstream stay with the
/// current one; end of sequence/bitstream also closes it at once.
///
/// Because a byte stream only reveals an access unit's end when the next one starts, a live
/// source calls ``flush(atMicros:reason:)`` when its input goes idle; the access unit then
/// completes with ``AccessUnit/Completion/idleGap`` instead of waiting a frame.
///
/// Groups with no VCL unit never become access units: they are prefixes of the next picture,
/// or, at the end of the stream, counted in ``Counters/unitsWithoutPicture`` and dropped.
import SpyglassBitstream
public struct AccessUnitAssembler {
    /// What the assembler counted.
    public struct Counters: Equatable, Sendable {
        /// NAL units accepted.
        public var nalUnits = 0
        /// Access units emitted (each holds a picture).
        public var accessUnits = 0
        /// Units with a forbidden header (`forbidden_zero_bit` set, H.265 temporal id 0), dropped.
        public var invalidUnits = 0
        /// Trailing units that held no picture (for example a lone end of bitstream), dropped.
        public var unitsWithoutPicture = 0
        /// Access units dropped for exceeding `maxAccessUnitBytes` or ``maxUnitsPerAccessUnit``.
        public var oversizeAccessUnits = 0
        /// Access units dropped because their SPS was over the picture-size cap.
        public var refusedAccessUnits = 0
        /// Pictures cut in two by a flush (idle gap or burst end): a slice of the picture
        /// arrived after its access unit had been closed. The rest goes on marked damaged and
        /// ``AccessUnit/isSplitFragment`` (the feed puts it back in the picture when it can).
        public var picturesSplit = 0
    }

    public let codec: VideoCodec
    /// Largest access unit, in bytes (default 32 MiB); a larger one is dropped and counted.
    public let maxAccessUnitBytes: Int
    /// Most NAL units in one access unit (4096): far above any level's slice limit (H.264
    /// Table A-1 allows at most a few hundred slices per picture at 8K; H.265 Table A.8, 600
    /// slice segments). A flood of tiny units (SEI, filler) never grows without bound: before
    /// the picture it is dropped and counted in ``Counters/unitsWithoutPicture``; with a
    /// picture, the access unit is dropped as oversize.
    public static let maxUnitsPerAccessUnit = 4096
    public private(set) var counters = Counters()
    /// Parameter sets seen so far, and the slice-header state needed for picture boundaries.
    public private(set) var parameterSets: ParameterSetStore

    private var units: [NALUnit] = []
    /// Parameter sets and SEI that came after a slice: the next slice's header says whether
    /// they repeat inside this picture or start the next one.
    private var held: [NALUnit] = []
    private var bytes = 0
    private var hasVCL = false
    private var isRAP = false
    private var hasParameterSets = false
    private var damaged = false
    private var oversize = false
    private var lastSlice: SliceInfo?
    /// The last access unit was closed by a flush (not by the next one starting).
    private var lastClosedByFlush = false
    private var firstByteMicros: UInt64 = 0
    private var captureWallMicros: UInt64?
    /// The capture time the transport gave the access unit in progress (RTCP, KLV).
    private var transportCapture: (wallMicros: UInt64, source: CaptureSource)?
    private var recoveryFrameCount: Int?
    private var allIntra = true
    private var cutDamaged = false
    /// The access unit in progress holds slices a flush split off the picture before it.
    private var splitFragment = false
    /// An access unit was dropped (over a cap): the next one goes on damaged.
    private var damageNext = false

    /// - Parameters:
    ///   - codec: the stream's codec.
    ///   - maxAccessUnitBytes: cap on one access unit in bytes (default 32 MiB).
    ///   - maxPictureWidth/maxPictureHeight: SPS beyond these are refused (default ``PictureSizeCap/default``, 8192x4320).
    public init(codec: VideoCodec, maxAccessUnitBytes: Int = 32 << 20,
                maxPictureWidth: Int = PictureSizeCap.default.width, maxPictureHeight: Int = PictureSizeCap.default.height) {
        self.codec = codec
        self.maxAccessUnitBytes = maxAccessUnitBytes
        self.parameterSets = ParameterSetStore(codec: codec, maxWidth: maxPictureWidth, maxHeight: maxPictureHeight)
    }

    /// Takes the next NAL unit.
    /// - Parameter unit: a unit from ``AnnexBScanner`` (or an RTP depacketizer).
    /// - Returns: the access unit this unit completed, if any (at most one).
    public mutating func push(_ unit: NALUnit) -> AccessUnit? {
        push(unit, onSplit: {})
    }

    /// Takes the next NAL unit, and says when it shows that a flush split a picture.
    /// - Parameters:
    ///   - unit: a unit from a depacketizer.
    ///   - onSplit: called when this slice continues a picture whose access unit a flush had
    ///     already closed (the fragment goes on damaged; counted in ``Counters/picturesSplit``).
    /// - Returns: the access unit this unit completed, if any (at most one).
    public mutating func push(_ unit: NALUnit, onSplit: () -> Void) -> AccessUnit? {
        guard let unit = unit.parsed(as: codec), let header = unit.header else {
            counters.invalidUnits += 1
            return nil
        }
        counters.nalUnits += 1
        var completed: AccessUnit?
        let kind = header.kind

        if header.isParameterSet {
            parameterSets.store(header: header, unit: unit.bytes)
            // An SPS over the picture-size cap never reaches the decoder.
            if parameterSets.refusing && (header.type == 7 || header.type == 33) { return nil }
        }
        if kind == .slice {
            let slice = parameterSets.sliceInfo(header: header, unit: unit.bytes)
            if hasVCL, let last = lastSlice, slice.startsNewPicture(after: last) {
                completed = closeBeforeHeld(completion: .nextAccessUnit, atMicros: unit.firstByteMicros)
            } else if !hasVCL && lastClosedByFlush, let last = lastSlice, slice.continuesPicture(of: last) {
                // The flush came between two slices of one picture: the rest of it is a fragment.
                counters.picturesSplit += 1
                damaged = true
                splitFragment = true
                onSplit()
            }
            // Parameter sets or SEI held after a slice, and this slice continues the picture:
            // they were repeated inside it (RTP payloaders that put SPS/PPS before every IDR
            // slice do this); they stay with this picture. Parameter sets go before its first
            // slice, where the standards put them: libavcodec's HEVC decoder refuses a picture
            // with parameter sets between its slice segments.
            appendHeld(insidePicture: true)
            if let intra = slice.isIntra {
                if !intra { allIntra = false }
            } else if slice.h265?.dependentSliceSegmentFlag != true {
                allIntra = false   // unreadable: not known to be intra
            }
            lastClosedByFlush = false
            lastSlice = slice
        } else if hasVCL && header.startsAccessUnitWhenAfterVCL {
            if Self.mayRepeatInsidePicture(header) && held.count < Self.maxHeldUnits {
                // Whether this starts the next picture is known only from the next slice's header.
                held.append(unit)
                return nil
            }
            completed = closeBeforeHeld(completion: .nextAccessUnit, atMicros: unit.firstByteMicros)
        }
        append(unit, header: header)

        if (kind == .endOfSequence || kind == .endOfBitstream) && hasVCL {
            // End of sequence: nothing of this picture can follow (H.264 §7.4.1.2.3).
            let done = closeBeforeHeld(completion: .endOfSequence, atMicros: unit.lastByteMicros)
            return completed ?? done  // `completed` is nil here: an EOS never starts an access unit
        }
        return completed
    }

    /// Non-VCL units that start an access unit when they follow a picture's slices by the letter
    /// of H.264 §7.4.1.2.3 / H.265 §7.4.2.4.4, but that senders also repeat between the slices of
    /// one picture: SPS, PPS, VPS and prefix SEI. An AUD (or a reserved type) always starts one.
    static func mayRepeatInsidePicture(_ h: NALUnitHeader) -> Bool {
        h.isParameterSet || h.kind == .sei
    }

    /// Most units held between slices before they are taken as the next picture's prefix
    /// (bounds memory when a sender floods SEI after a picture).
    public static let maxHeldUnits = 64

    /// Closes the access unit in progress, if it holds a picture.
    /// - Parameters:
    ///   - atMicros: monotonic time the end became known, µs.
    ///   - reason: `.idleGap` for a live input gone quiet, `.burstEnd` after a sender's last
    ///     short datagram, `.endOfStream` at the end.
    /// - Returns: the access unit, or nil when nothing with a picture was pending.
    public mutating func flush(atMicros: UInt64, reason: AccessUnit.Completion) -> AccessUnit? {
        if hasVCL {
            lastClosedByFlush = true
            let au = closeBeforeHeld(completion: reason, atMicros: atMicros)
            if reason == .endOfStream && !units.isEmpty {
                // Parameter sets or SEI after the last picture: no picture follows them.
                counters.unitsWithoutPicture += units.count
                reset()
            }
            return au
        }
        if reason == .endOfStream && !units.isEmpty {
            counters.unitsWithoutPicture += units.count
            reset()
        }
        if reason == .markerBit && damaged {
            // The marker ended a picture all of whose slices were lost: not the next picture's
            // damage, but the picture after it is predicted from one the decoder never got
            // (unless it is an IDR, which a keyframe request for this very loss asks for).
            damaged = false
            damageNext = true
        }
        return nil
    }

    /// Marks the access unit in progress as damaged (packets were lost inside it).
    public mutating func markDamaged() { damaged = true }

    /// True when the access unit in progress holds a unit whose last byte arrived at `micros`.
    public func pendingHasUnit(endingAt micros: UInt64) -> Bool {
        units.contains { $0.lastByteMicros == micros } || held.contains { $0.lastByteMicros == micros }
    }

    /// Puts a unit passed on again whole (``NALUnit/repairs``) in place of its cut version, when
    /// the cut one is still in the access unit in progress. A parameter set is stored again
    /// whole in any case: the cut one was stored (or refused) when it came.
    /// - Returns: false when that unit is not pending (its access unit has gone out).
    public mutating func replacePending(_ unit: NALUnit, endingAt micros: UInt64) -> Bool {
        guard let whole = unit.parsed(as: codec) else { return false }
        if let header = whole.header, header.isParameterSet { parameterSets.store(header: header, unit: whole.bytes) }
        // The cut unit is the last one its flush passed on (others of the same read end at the same time).
        if let i = held.lastIndex(where: { $0.lastByteMicros == micros }) {
            held[i] = whole
        } else if let i = units.lastIndex(where: { $0.lastByteMicros == micros }) {
            bytes += whole.bytes.count - units[i].bytes.count
            units[i] = whole
        } else {
            return false
        }
        cutDamaged = false
        return true
    }

    /// A unit of the access unit in progress went on cut: it is damaged unless repaired.
    public mutating func markCut() { cutDamaged = true }

    /// VCL units (slices) in the access unit in progress.
    public private(set) var pendingSlices = 0

    /// Index the access unit in progress will get when it completes.
    public var nextIndex: Int { counters.accessUnits }

    /// The transport's capture time for the access unit in progress (an SEI stamp in it wins).
    /// - Parameters:
    ///   - wallMicros: µs since the Unix epoch.
    ///   - source: `rtcp` or `klv`.
    public mutating func noteCaptureTime(wallMicros: UInt64, source: CaptureSource) {
        transportCapture = (wallMicros, source)
    }

    /// Drops what is in progress and forgets slice state (after a loss or a sender restart).
    /// Parameter sets are kept.
    public mutating func discardPending() {
        reset()
        held.removeAll()
        lastSlice = nil
    }

    // MARK: - private

    private mutating func append(_ unit: NALUnit, header: NALUnitHeader, beforeSlices: Bool = false) {
        if header.kind == .sei, let facts = SEIFacts(unit: unit.bytes, codec: codec) {
            if captureWallMicros == nil { captureWallMicros = facts.captureWallMicros }
            if recoveryFrameCount == nil { recoveryFrameCount = facts.recoveryFrameCount }
        }
        if header.isParameterSet && (header.type == 7 || header.type == 33) { hasParameterSets = true }
        // Flags are kept even for an oversize unit, so that its end is still found.
        if header.isVCL { hasVCL = true; pendingSlices += 1 }
        if header.isRandomAccessPoint { isRAP = true }
        if unit.damaged { damaged = true }
        if oversize { return }
        if units.count >= Self.maxUnitsPerAccessUnit && !hasVCL {
            // A flood of units with no picture yet (SEI, filler, AUD): drop what is held and go on,
            // so that the picture that follows still gets through.
            counters.unitsWithoutPicture += units.count
            units.removeAll(keepingCapacity: false)
            bytes = 0
        }
        if bytes + unit.bytes.count > maxAccessUnitBytes || units.count >= Self.maxUnitsPerAccessUnit {
            counters.oversizeAccessUnits += 1
            oversize = true
            units.removeAll()
            return
        }
        if units.isEmpty { firstByteMicros = unit.firstByteMicros }
        if beforeSlices, let first = units.firstIndex(where: { $0.header?.isVCL == true }) {
            units.insert(unit, at: first)
        } else {
            units.append(unit)
        }
        bytes += unit.bytes.count
    }

    /// Closes the picture in progress without the held units, which then begin the next access unit.
    private mutating func closeBeforeHeld(completion: AccessUnit.Completion, atMicros: UInt64) -> AccessUnit? {
        let au = close(completion: completion, atMicros: atMicros)
        appendHeld()
        return au
    }

    /// Appends the held units where the stream now stands (inside the picture in progress: the
    /// parameter sets before its first slice).
    private mutating func appendHeld(insidePicture: Bool = false) {
        guard !held.isEmpty else { return }
        let units = held
        held.removeAll(keepingCapacity: true)
        for u in units { append(u, header: u.header!, beforeSlices: insidePicture && u.header!.isParameterSet) }
    }

    private mutating func close(completion: AccessUnit.Completion, atMicros: UInt64) -> AccessUnit? {
        defer { reset() }
        if hasVCL && oversize {
            // A picture dropped whole: the next ones are predicted from what the decoder never
            // got. The next access unit goes on damaged, and the damage carries from there.
            damageNext = true
            return nil
        }
        guard hasVCL, let last = units.last else { return nil }
        if parameterSets.refusing {
            counters.refusedAccessUnits += 1
            return nil
        }
        // An IDR (or BLA) does not depend on the picture that was dropped or lost before it.
        let closedRandomAccess = damageNext && units.contains { $0.header?.isClosedRandomAccessPoint == true }
        let au = AccessUnit(codec: codec, index: counters.accessUnits, units: units,
                            isRandomAccessPoint: isRAP, hasParameterSets: hasParameterSets,
                            damaged: damaged || cutDamaged || (damageNext && !closedRandomAccess), completion: completion,
                            firstByteMicros: firstByteMicros, lastByteMicros: last.lastByteMicros,
                            completeMicros: max(atMicros, last.lastByteMicros))
        counters.accessUnits += 1
        damageNext = false
        var out = au
        out.captureWallMicros = captureWallMicros ?? transportCapture?.wallMicros
        out.captureSource = captureWallMicros == nil ? transportCapture?.source ?? .sei : .sei
        out.sliceCount = pendingSlices
        out.recoveryFrameCount = recoveryFrameCount
        out.isAllIntra = allIntra
        out.isSplitFragment = splitFragment
        return out
    }

    private mutating func reset() {
        units.removeAll(keepingCapacity: true)
        bytes = 0
        hasVCL = false
        pendingSlices = 0
        isRAP = false
        hasParameterSets = false
        damaged = false
        oversize = false
        captureWallMicros = nil
        transportCapture = nil
        recoveryFrameCount = nil
        allIntra = true
        cutDamaged = false
        splitFragment = false
    }
}

extension AccessUnitAssembler {
    /// A whole Annex B byte stream cut into access units at once (scanner, codec detection,
    /// assembler, end of stream): for files sent or read back whole.
    /// - Parameters:
    ///   - bytes: the stream.
    ///   - codec: the codec, or nil to detect it from the NAL headers (H.264 when undecided).
    /// - Returns: the codec, the access units, and the assembler (its parameter sets).
    public static func accessUnits(ofAnnexB bytes: [UInt8], codec: VideoCodec? = nil) -> (VideoCodec, [AccessUnit], AccessUnitAssembler) {
        var scanner = AnnexBScanner()
        var units: [NALUnit] = []
        scanner.push(bytes, arrivalMicros: 0) { units.append($0) }
        scanner.flush(atMicros: 0, reason: .endOfStream) { units.append($0) }
        var chosen = codec
        if chosen == nil {
            var detector = CodecDetector()
            for u in units { if let c = detector.observe(u.bytes) { chosen = c; break } }
        }
        var asm = AccessUnitAssembler(codec: chosen ?? .h264)
        var aus: [AccessUnit] = []
        for u in units { if let au = asm.push(u) { aus.append(au) } }
        if let au = asm.flush(atMicros: 0, reason: .endOfStream) { aus.append(au) }
        return (asm.codec, aus, asm)
    }
}
