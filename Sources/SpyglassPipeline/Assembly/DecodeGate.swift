/// Decides, for each complete access unit, whether it goes to the decoder now, later, or not at all.
///
/// A pure value, no I/O: it
/// - waits for parameter sets (a join after the sender's SPS/PPS went by);
/// - applies the join rule (``RandomAccessGate``: IDR/IRAP or a recovery point, or give up after
///   the join timeout);
/// - carries damage forward: pictures predicted from a damaged one are marked damaged until a
///   clean IDR/IRAP, or until a recovery point's refresh is complete (H.264 §D.2.8
///   `recovery_frame_cnt` pictures later), so that a picture on broken references is never
///   passed off as clean;
/// - paces files and pipes at the stream's frame rate (``Pacer``); live sources are never paced.
import SpyglassBitstream
public struct DecodeGate {
    /// The answer for one access unit.
    public enum Verdict {
        /// Decode it now (damage inherited from its references already applied).
        case decode(AccessUnit)
        /// Decode it at `untilMicros` (monotonic µs): paced playback of a file or pipe.
        case hold(AccessUnit, untilMicros: UInt64)
        /// Do not decode it.
        case skip(SkipReason)
    }

    /// Why an access unit was not decoded.
    public enum SkipReason: Equatable {
        /// No SPS/PPS (and VPS) yet. `first`: the first time, worth one log line.
        case waitingForParameterSets(first: Bool)
        /// After a join or restart, before an IDR/IRAP/recovery point (or the join timeout).
        case waitingForJoinPoint
    }

    /// How access units are released.
    public enum Pacing: Equatable {
        /// Live: at once, always.
        case live
        /// A file or pipe: at `fps` if given, else the stream's VUI rate, else 30.
        case paced(fps: Double?)
    }

    private var join: RandomAccessGate
    private let pacing: Pacing
    private var pacer: Pacer?
    private var referencesDamaged = false
    private var refreshLeft: Int?
    private var loggedParameterSetWait = false
    /// Lines worth logging, taken by ``takeNotes()``.
    private var notes: [String] = []
    /// What the gate counted.
    public private(set) var counts: [Metric: Int] = [:]

    /// - Parameters:
    ///   - joinTimeoutMicros: longest wait for a join point, µs.
    ///   - pacing: live or paced.
    public init(joinTimeoutMicros: Int, pacing: Pacing) {
        join = RandomAccessGate(timeoutMicros: UInt64(max(0, joinTimeoutMicros)))
        self.pacing = pacing
    }

    /// Starts waiting for a join point (at start, after a codec change or a sender restart).
    public mutating func restart(atMicros: UInt64) { join.restart(atMicros: atMicros) }

    /// A NAL unit of an access unit that already went to the decoder turned out cut: the
    /// pictures that follow are on damaged references.
    public mutating func noteDamageAfterTheFact() {
        counts[.damagedAccessUnits, default: 0] += 1
        referencesDamaged = true
        refreshLeft = nil
    }

    /// The decoder gave out a damaged picture (one it concealed, libavcodec's error flags): the
    /// pictures that follow are on damaged references until an IDR/IRAP or a recovery point.
    /// Counted as concealed by the decoder, not here.
    public mutating func noteDamagedPicture() {
        referencesDamaged = true
        refreshLeft = nil
    }

    /// A repair re-decoded everything since the last IDR/IRAP: references are clean again.
    public mutating func noteRepaired() {
        referencesDamaged = false
        refreshLeft = nil
    }

    /// The verdict for one complete access unit.
    /// - Parameters:
    ///   - au: from the access-unit stage.
    ///   - parameterSetsReady: SPS and PPS (and for H.265 VPS) have been seen.
    ///   - streamFrameRate: the VUI frame rate, fps, if the SPS gives one (for pacing).
    ///   - nowMicros: monotonic now, µs.
    public mutating func admit(_ au: AccessUnit, parameterSetsReady: Bool, streamFrameRate: Double?,
                               nowMicros: UInt64) -> Verdict {
        if au.damaged { counts[.damagedAccessUnits, default: 0] += 1 }
        guard parameterSetsReady else {
            counts[.skippedBeforeJoin, default: 0] += 1
            defer { loggedParameterSetWait = true }
            return .skip(.waitingForParameterSets(first: !loggedParameterSetWait))
        }
        guard join.admit(accessUnit: au, nowMicros: nowMicros) else {
            counts[.skippedBeforeJoin, default: 0] += 1
            return .skip(.waitingForJoinPoint)
        }
        var out = inheritDamage(au)
        guard case .paced(let fps) = pacing else { return .decode(out) }
        if pacer == nil { pacer = Pacer(framesPerSecond: choosePace(option: fps, vui: streamFrameRate)) }
        let release = pacer!.releaseTime(arrivalMicros: au.completeMicros)
        // A paced picture (a file, stdin) arrives when it is due, held or already late: the wait
        // for the pace is the file's timing, not time the receiver added (it read as "assembly"
        // of 165 ms; a late one read as 61 ms).
        out.firstByteMicros = max(out.firstByteMicros, release)
        out.lastByteMicros = max(out.lastByteMicros, release)
        out.completeMicros = max(out.completeMicros, release)
        return release > nowMicros ? .hold(out, untilMicros: release) : .decode(out)
    }

    /// Per-NAL decoding (`--decode nal`): may this unit go to the decoder? Only slices are held
    /// back while waiting for a join point.
    public mutating func admit(unit: NALUnit, nowMicros: UInt64) -> Bool {
        guard let header = unit.header else { return false }
        let ok = join.admit(unit: unit.bytes, header: header, nowMicros: nowMicros)
        if !ok { counts[.skippedBeforeJoin, default: 0] += 1 }
        return ok
    }

    /// Per-NAL decoding: an access unit whose units were already decoded is complete.
    public mutating func noteDecodedPerNAL(_ au: AccessUnit) {
        if au.damaged { counts[.damagedAccessUnits, default: 0] += 1 }
    }

    /// Log lines gathered since the last call.
    public mutating func takeNotes() -> [String] {
        defer { notes.removeAll() }
        return notes
    }

    // MARK: - private

    private mutating func choosePace(option: Double?, vui: Double?) -> Double {
        if let option {
            notes.append(String(format: "playing at %.3f fps", option))
            return option
        }
        guard let vui else {
            notes.append("warning: the stream carries no frame rate (VUI timing); playing at 30 fps (use --fps N or --untimed)")
            return 30
        }
        guard vui >= 1 && vui <= 240 else {
            notes.append(String(format: "warning: the VUI frame rate %.4g fps is implausible; playing at 30 fps (use --fps N or --untimed)", vui))
            return 30
        }
        notes.append(String(format: "playing at %.3f fps (VUI timing)", vui))
        return vui
    }

    private mutating func inheritDamage(_ au: AccessUnit) -> AccessUnit {
        if au.damaged {
            referencesDamaged = true
            refreshLeft = nil
            return au
        }
        guard referencesDamaged else { return au }
        if au.isRandomAccessPoint {
            referencesDamaged = false
            refreshLeft = nil
            return au
        }
        if refreshLeft == nil { refreshLeft = au.recoveryFrameCount }
        if let left = refreshLeft {
            if left <= 0 { referencesDamaged = false; refreshLeft = nil; return au }
            refreshLeft = left - 1
        }
        counts[.framesOnDamagedReferences, default: 0] += 1
        var out = au
        out.damaged = true
        return out
    }
}
