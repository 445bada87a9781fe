/// What a feed did over the last second, from two snapshots of its ``MetricsRegistry``: the
/// numbers of the wall's `i` overlay.
public struct FeedSecond: Sendable {
    /// Access units assembled, pictures decoded and pictures shown, per second.
    public var accessUnitsPerSecond = 0.0, decodedPerSecond = 0.0, shownPerSecond = 0.0
    /// Bits received per second.
    public var bitsPerSecond = 0.0
    /// RTP packets lost and damaged access units in the second.
    public var packetsLost = 0, damagedAccessUnits = 0
    /// Decoder resets so far.
    public var resets = 0
    /// p50 and p99 of each stage in the second, ms (stages with no sample are absent).
    public var stageMillis: [Stage: (p50: Double, p99: Double)] = [:]

    /// - Parameters: earlier/later: snapshots `seconds` apart.
    public init(from earlier: MetricsRegistry.Snapshot, to later: MetricsRegistry.Snapshot, seconds: Double) {
        let s = max(seconds, 0.001)
        let rate = { (m: Metric) in Double(later[m] - earlier[m]) / s }
        accessUnitsPerSecond = rate(.accessUnits)
        decodedPerSecond = rate(.framesDecoded)
        shownPerSecond = rate(.framesShown)
        bitsPerSecond = rate(.bytes) * 8
        packetsLost = later[.packetsLost] - earlier[.packetsLost]
        damagedAccessUnits = later[.damagedAccessUnits] - earlier[.damagedAccessUnits]
        resets = later[.resets]
        for (stage, h) in later.stages {
            let d = h.subtracting(earlier.stages[stage] ?? Histogram())
            if let p50 = d.quantileMicros(0.5), let p99 = d.quantileMicros(0.99) { stageMillis[stage] = (p50 / 1000, p99 / 1000) }
        }
    }

    /// The overlay's lines, compact enough for a 480x270 tile.
    /// - Parameters: format: codec and size ("H.264 640x360"); targetMillis: the glass-to-glass target.
    public func lines(format: String?, targetMillis: Double?) -> [String] {
        let ms = { (stage: Stage, name: String) in
            self.stageMillis[stage].map { String(format: "%@ %.1f/%.1f", name, $0.p50, $0.p99) }
        }
        var out = [[format, String(format: "%.2f Mb/s", bitsPerSecond / 1e6), "resets \(resets)"].compactMap { $0 }.joined(separator: " · "),
                   String(format: "fps in %.0f · dec %.0f · shown %.0f", accessUnitsPerSecond, decodedPerSecond, shownPerSecond),
                   "lost \(packetsLost) · damaged \(damagedAccessUnits)"]
        let stages = [ms(.assembly, "asm"), ms(.decode, "dec"), ms(.queue, "q"), ms(.render, "rnd")].compactMap { $0 }
        if !stages.isEmpty { out.append(stages.joined(separator: " ") + " ms") }
        var last = [ms(.receiverAdded, "rx").map { $0 + " ms" }].compactMap { $0 }
        if let g = stageMillis[.glassToGlass] {
            last.append(String(format: "g2g %.0f/%.0f ms", g.p50, g.p99) + (targetMillis.map { String(format: " (target %.0f)", $0) } ?? ""))
        }
        if !last.isEmpty { out.append(last.joined(separator: " · ")) }
        return out
    }
}
