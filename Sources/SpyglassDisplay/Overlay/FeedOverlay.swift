import SpyglassPipeline
import SpyglassFeed
/// The live overlay of one feed (`i` in the window): what an operator watching a link needs at a
/// glance, over the last second, from the feed's ``MetricsRegistry``:
///
/// - frames per second in, decoded and shown (measured, not the rate the stream declares), and
///   the bitrate;
/// - glass-to-glass p50 and p99 against the target, coloured (``OverlayLine/Tone/of(millis:target:)``),
///   with the source of the capture time (SEI, RTCP, KLV, none);
/// - each stage's p50/p99 (assembly, decode, queue, render) and receiver-added;
/// - frame age, which rule ended the access units, loss and damage, codec, size and resets.
///
/// The compact form (three lines) fits a 480x270 tile.
public enum FeedOverlay {
    /// What the overlay reads.
    public struct Inputs: Sendable {
        /// The whole run's numbers (codec, format, resets, capture source).
        public var snapshot: MetricsRegistry.Snapshot
        /// The last second.
        public var rates: FeedRates
        /// Time since the newest picture was shown, ms (nil before the first).
        public var frameAgeMillis: Double?
        /// Glass-to-glass target, ms (100 by default).
        public var targetMillis: Double
        public init(snapshot: MetricsRegistry.Snapshot, rates: FeedRates, frameAgeMillis: Double?, targetMillis: Double = 100) {
            self.snapshot = snapshot
            self.rates = rates
            self.frameAgeMillis = frameAgeMillis
            self.targetMillis = targetMillis
        }
    }

    /// The overlay's lines, full or compact.
    public static func lines(_ i: Inputs, compact: Bool) -> [OverlayLine] {
        compact ? compactLines(i) : fullLines(i)
    }

    static func fullLines(_ i: Inputs) -> [OverlayLine] {
        let r = i.rates, s = i.snapshot
        var out = [OverlayLine("\(s.format ?? s.codec ?? "no picture yet") · resets \(s[.resets])")]
        out.append(OverlayLine(String(format: "%.1f fps in · %.1f decoded · %.1f shown · %@", r.accessUnitsPerSecond,
                                      r.decodedPerSecond, r.shownPerSecond, bitrate(r.bitsPerSecond))))
        out.append(glassToGlass(i, compact: false))
        out.append(OverlayLine("receiver-added " + pair(r, .receiverAdded) + " · assembly " + pair(r, .assembly)
                               + " · decode " + pair(r, .decode)))
        out.append(OverlayLine("queue " + pair(r, .queue) + " · render " + pair(r, .render) + " (p50/p99 ms)"))
        out.append(OverlayLine("frame age \(age(i.frameAgeMillis)) · ended by \(completions(r.completions))"))
        out.append(lossLine(r))
        if let recovery = recoveryLine(s) { out.append(recovery) }
        return out
    }

    /// RTP after loss: how long the picture took to come clean again (first damaged picture to
    /// the next IDR/IRAP) and the keyframe requests sent; nil before any recovery or request.
    static func recoveryLine(_ s: MetricsRegistry.Snapshot) -> OverlayLine? {
        let requests = s[.keyframeRequestsLoss] + s[.keyframeRequestsCut] + s[.keyframeRequestsJoin]
        let h = s.stages[.recovery]
        guard requests > 0 || (h?.count ?? 0) > 0 else { return nil }
        let clean: String
        if let h, h.count > 0, let p50 = h.quantileMicros(0.5) {
            clean = String(format: "clean again after damage: p50 %.0f ms (%d time%@)", p50 / 1000, Int(h.count), h.count == 1 ? "" : "s")
        } else {
            clean = "not clean again yet"
        }
        return OverlayLine("\(clean) · \(requests) keyframe request\(requests == 1 ? "" : "s")")
    }

    static func compactLines(_ i: Inputs) -> [OverlayLine] {
        let r = i.rates
        return [OverlayLine(String(format: "%.0f fps · %@ · age %@", r.shownPerSecond, bitrate(r.bitsPerSecond), age(i.frameAgeMillis))),
                glassToGlass(i, compact: true),
                lossLine(r)]
    }

    /// Glass-to-glass against the target, or why there is none.
    static func glassToGlass(_ i: Inputs, compact: Bool) -> OverlayLine {
        let r = i.rates
        guard let p50 = r.millis(.glassToGlass, quantile: 0.5), let p99 = r.millis(.glassToGlass, quantile: 0.99) else {
            // A stalled feed that carried capture times must not read as one that never did.
            let why = r.shownPerSecond == 0 ? "no picture shown in the last second"
                : i.snapshot.clockStatus ?? (i.snapshot.captureSource != nil ? "no capture time in the last second"
                                                                               : "no capture time in the stream")
            return OverlayLine(compact ? "g2g –" : "glass-to-glass: none (\(why))")
        }
        let origin = i.snapshot.captureSource.flatMap(CaptureSource.init(rawValue:))
        let source = (i.snapshot.captureSource ?? "none").uppercased()
        // An RTCP stamp is taken after encoding: the figure is a lower bound, and says so.
        let atLeast = origin?.isLowerBound == true ? "≥" : ""
        let text = compact
            ? String(format: "g2g %@%.0f/%.0f ms (%@)", atLeast, p50, p99, source)
            : String(format: "glass-to-glass p50 %@%.1f p99 %@%.1f ms · target %.0f · %@", atLeast, p50, atLeast, p99, i.targetMillis,
                     atLeast.isEmpty ? source : source + " (stamped after encoding: a lower bound)")
        return OverlayLine(text, .of(millis: p99, target: i.targetMillis))
    }

    static func lossLine(_ r: FeedRates) -> OverlayLine {
        OverlayLine("loss \(r.lost) · damaged \(r.damaged) (last second)", r.lost + r.damaged > 0 ? .warning : .plain)
    }

    static func pair(_ r: FeedRates, _ stage: Stage) -> String {
        guard let a = r.millis(stage, quantile: 0.5), let b = r.millis(stage, quantile: 0.99) else { return "–" }
        return String(format: "%.1f/%.1f", a, b)
    }

    static func age(_ millis: Double?) -> String {
        guard let millis else { return "–" }
        return millis < 10_000 ? String(format: "%.0f ms", millis) : String(format: "%.0f s", millis / 1000)
    }

    /// A bitrate as people read it: "4.1 Mb/s", "800 kb/s".
    public static func bitrate(_ bps: Double) -> String {
        bps >= 1e6 ? String(format: "%.1f Mb/s", bps / 1e6) : String(format: "%.0f kb/s", bps / 1e3)
    }

    /// "marker 100 %", "idle 60 % · next-au 40 %": the rules that ended the last second's pictures.
    static func completions(_ c: [String: Int]) -> String {
        let total = c.values.reduce(0, +)
        guard total > 0 else { return "–" }
        return c.sorted { $0.value > $1.value }.prefix(3)
            .map { "\($0.key) \(Int((Double($0.value) * 100 / Double(total)).rounded())) %" }.joined(separator: " · ")
    }
}
