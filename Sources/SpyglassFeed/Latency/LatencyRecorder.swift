import Foundation
import Synchronization
import SpyglassPipeline

/// One frame's latency, split into stages that add up to glass-to-glass.
///
/// Stages (ms, from the monotonic stamps; the capture stamp is a wall-clock time and is moved
/// onto the monotonic clock with the offset measured at start):
/// - `senderNetwork`: capture → last byte in (encode, send, network)
/// - `assembly`: last byte → decode start (knowing the access unit is complete)
/// - `decode`: decode start → decode end
/// - `queue`: decode end → render start (waiting for the display)
/// - `render`: render start → presented (upload, draw, `SDL_RenderPresent`)
/// - `glassToGlass` = presented − capture; `receiverAdded` = presented − last byte.
public struct LatencySample: Sendable {
    /// Output order of the frame, from 0.
    public var frame: Int
    /// Index of its access unit.
    public var accessUnit: Int
    /// Replaced before it could be presented (newest wins).
    public var dropped: Bool
    /// Built from damaged input, or concealed by libavcodec.
    public var damaged: Bool
    /// The rule that ended its access unit (`marker`, `idle`, `next-au`, …).
    public var completion: AccessUnit.Completion?
    /// Its monotonic stage stamps, µs.
    public var timing: FrameTiming
    /// Capture time on the monotonic clock, µs (0 when the stream carries no stamp).
    public var captureMicros: UInt64

    static func ms(_ a: UInt64, _ b: UInt64) -> Double? {
        guard a > 0, b > 0 else { return nil }
        return (Double(b) - Double(a)) / 1000
    }
    /// Capture → last byte in, ms (nil without a capture stamp).
    public var senderNetworkMillis: Double? { Self.ms(captureMicros, timing.lastByteMicros) }
    /// Last byte → decode start, ms.
    public var assemblyMillis: Double? { Self.ms(timing.lastByteMicros, timing.decodeStartMicros) }
    /// libavcodec's work on the picture, ms (``FrameTiming/decodeMicros``).
    public var decodeMillis: Double? { timing.decodeMicros.map { Double($0) / 1000 } }
    /// Held by libavcodec for output order, ms (0 when none; nil before decoding).
    public var reorderMillis: Double? { timing.decodeMicros == nil ? nil : Double(timing.reorderMicros) / 1000 }
    /// Decode end → render start, ms.
    public var queueMillis: Double? {
        Self.ms(timing.decodeEndMicros, timing.renderStartMicros > 0 ? timing.renderStartMicros : timing.presentedMicros)
    }
    /// Render start → presented, ms (0 headless).
    public var renderMillis: Double? {
        timing.renderStartMicros > 0 ? Self.ms(timing.renderStartMicros, timing.presentedMicros) : (timing.presentedMicros > 0 ? 0 : nil)
    }
    /// Capture → presented, ms.
    public var glassToGlassMillis: Double? { dropped ? nil : Self.ms(captureMicros, timing.presentedMicros) }
    /// Last byte → presented, ms.
    public var receiverAddedMillis: Double? { dropped ? nil : Self.ms(timing.lastByteMicros, timing.presentedMicros) }
    /// Optical glass-to-glass: presented − the time code a camera filmed (`--clock`), ms.
    public var opticalMillis: Double? {
        guard !dropped, timing.opticalWallMicros > 0, opticalMonotonicMicros > 0 else { return nil }
        return Self.ms(opticalMonotonicMicros, timing.presentedMicros)
    }
    /// The optical time code moved onto the monotonic clock, µs (0 = none).
    public var opticalMonotonicMicros: UInt64 = 0
}

/// Collects per-frame timing, writes `--latency-log` (CSV or JSON Lines, by extension), and
/// gives percentiles per stage. Thread-safe. Keeps at most `maxSamples` in memory for the
/// statistics; the log file gets every row.
public final class LatencyRecorder: Sendable {
    /// Stage names in table order.
    public static let stages = ["sender+network", "assembly", "decode", "reorder", "queue", "render", "receiver-added", "glass-to-glass", "optical"]

    /// The log file and the kept samples, written from the feed's thread and the window's.
    private struct State {
        var samples: [LatencySample] = []
        var file: OutputFile?
        var count = 0
    }
    private let state: Mutex<State>
    private let maxSamples: Int
    private let jsonLines: Bool
    /// Rows written or kept, including dropped frames.
    public var count: Int { state.withLock { $0.count } }

    /// - Parameters:
    ///   - logPath: `.csv` or `.jsonl` file to write, or nil.
    ///   - maxSamples: rows kept in memory for statistics (default 1,000,000).
    /// - Throws: when the log file cannot be created.
    public init(logPath: String?, maxSamples: Int = 1_000_000) throws {
        self.maxSamples = maxSamples
        jsonLines = logPath?.hasSuffix(".jsonl") ?? false || logPath?.hasSuffix(".json") ?? false
        var file: OutputFile?
        if let logPath {
            let f = try OutputFile(path: logPath)
            if !jsonLines {
                f.write(("frame,au,dropped,damaged,completion,capture_wall_us,capture_us,first_byte_us,last_byte_us,complete_us,"
                    + "decode_start_us,decode_end_us,render_start_us,presented_us,"
                    + "sender_network_ms,assembly_ms,decode_ms,queue_ms,render_ms,receiver_added_ms,glass_to_glass_ms,optical_ms,capture_source,reorder_ms\n"))
            }
            file = f
        }
        state = Mutex(State(file: file))
    }

    /// Records a frame that was presented (`dropped` false) or replaced before it could be.
    public func record(_ frame: DecodedFrame, dropped: Bool) {
        // The wall clock as it is now (it may have been stepped since the feed began: see
        // ``CaptureClockTap``), to put wall times on the frame's monotonic timeline.
        let wallMinusMonotonicMicros = MonotonicClock.wallMinusMonotonicMicros
        var t = frame.timing
        if let e = frame.replayEntry { t.replayed(as: e, currentWallMinusMonotonicMicros: wallMinusMonotonicMicros) }
        let capture = t.captureWallMicros > 0 ? UInt64(max(0, Int64(clamping: t.captureWallMicros) &- wallMinusMonotonicMicros)) : 0
        var s = LatencySample(frame: frame.index, accessUnit: frame.accessUnitIndex, dropped: dropped,
                              damaged: frame.damaged, completion: t.completion, timing: t, captureMicros: capture)
        if t.opticalWallMicros > 0 {
            s.opticalMonotonicMicros = UInt64(max(0, Int64(bitPattern: t.opticalWallMicros) - wallMinusMonotonicMicros))
        }
        let line = row(s)
        state.withLock { st in
            if st.samples.count < maxSamples { st.samples.append(s) }
            st.count += 1
            st.file?.write(line)
        }
    }

    private func row(_ s: LatencySample) -> String {
        func f(_ v: Double?) -> String { v.map(Self.threeDecimals) ?? "" }
        let t = s.timing
        if jsonLines {
            func j(_ v: Double?) -> String { v.map(Self.threeDecimals) ?? "null" }
            return "{\"frame\":\(s.frame),\"au\":\(s.accessUnit),\"dropped\":\(s.dropped),\"damaged\":\(s.damaged),"
                + "\"completion\":\"\(s.completion?.rawValue ?? "")\",\"capture_wall_us\":\(t.captureWallMicros),\"capture_us\":\(s.captureMicros),"
                + "\"first_byte_us\":\(t.firstByteMicros),\"last_byte_us\":\(t.lastByteMicros),\"complete_us\":\(t.completeMicros),"
                + "\"decode_start_us\":\(t.decodeStartMicros),\"decode_end_us\":\(t.decodeEndMicros),"
                + "\"render_start_us\":\(t.renderStartMicros),\"presented_us\":\(t.presentedMicros),"
                + "\"sender_network_ms\":\(j(s.senderNetworkMillis)),\"assembly_ms\":\(j(s.assemblyMillis)),"
                + "\"decode_ms\":\(j(s.decodeMillis)),\"queue_ms\":\(j(s.queueMillis)),\"render_ms\":\(j(s.renderMillis)),"
                + "\"receiver_added_ms\":\(j(s.receiverAddedMillis)),\"glass_to_glass_ms\":\(j(s.glassToGlassMillis)),"
                + "\"optical_ms\":\(j(s.opticalMillis)),\"capture_source\":\"\(t.captureWallMicros > 0 || t.captureSource == .clockOffset ? t.captureSource.rawValue : "none")\",\"reorder_ms\":\(j(s.reorderMillis))}\n"
        }
        return "\(s.frame),\(s.accessUnit),\(s.dropped ? 1 : 0),\(s.damaged ? 1 : 0),\(s.completion?.rawValue ?? ""),\(t.captureWallMicros),\(s.captureMicros),"
            + "\(t.firstByteMicros),\(t.lastByteMicros),\(t.completeMicros),\(t.decodeStartMicros),\(t.decodeEndMicros),"
            + "\(t.renderStartMicros),\(t.presentedMicros),\(f(s.senderNetworkMillis)),\(f(s.assemblyMillis)),"
            + "\(f(s.decodeMillis)),\(f(s.queueMillis)),\(f(s.renderMillis)),\(f(s.receiverAddedMillis)),\(f(s.glassToGlassMillis)),"
            + "\(f(s.opticalMillis)),\(t.captureWallMicros > 0 || t.captureSource == .clockOffset ? t.captureSource.rawValue : "none"),\(f(s.reorderMillis))\n"
    }

    /// `v` with three decimals, as `%.3f` prints it (ties may round the other way in the last
    /// digit), without Foundation's formatter: a row is written for every picture.
    static func threeDecimals(_ v: Double) -> String {
        guard v.isFinite, abs(v) < 1e12 else { return String(format: "%.3f", v) }
        let thousandths = Int64((abs(v) * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return (v.sign == .minus ? "-" : "") + String(thousandths / 1000) + "."
            + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// All kept samples.
    public var allSamples: [LatencySample] { state.withLock { $0.samples } }

    /// p50/p95/p99/max of one stage over presented frames, ms; nil when no frame has it.
    public func percentiles(_ stage: String) -> (p50: Double, p95: Double, p99: Double, max: Double, n: Int)? {
        let values = allSamples.filter { !$0.dropped }.compactMap { s -> Double? in
            switch stage {
            case "sender+network": return s.senderNetworkMillis
            case "assembly": return s.assemblyMillis
            case "decode": return s.decodeMillis
            case "reorder": return s.reorderMillis
            case "queue": return s.queueMillis
            case "render": return s.renderMillis
            case "receiver-added": return s.receiverAddedMillis
            case "glass-to-glass": return s.glassToGlassMillis
            case "optical": return s.opticalMillis
            default: return nil
            }
        }.sorted()
        guard !values.isEmpty else { return nil }
        func q(_ p: Double) -> Double { values[min(values.count - 1, Int((p * Double(values.count - 1)).rounded()))] }
        return (q(0.5), q(0.95), q(0.99), values.last!, values.count)
    }

    /// A table of the stages, one line each, for the terminal.
    public func table() -> String {
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        var lines = [pad("stage", 16) + "   p50 ms   p95 ms   p99 ms   max ms  frames"]
        for stage in Self.stages {
            guard let p = percentiles(stage) else { continue }
            lines.append(pad(stage, 16) + String(format: " %8.2f %8.2f %8.2f %8.2f %7d", p.p50, p.p95, p.p99, p.max, p.n))
        }
        return lines.joined(separator: "\n")
    }

    /// True when writing the log failed (the first error is in ``writeError``).
    public var writeFailed: Bool { state.withLock { $0.file?.failed ?? false } }
    /// The first write error, as text.
    public var writeError: String? { state.withLock { $0.file?.error } }

    /// Closes the log.
    public func close() {
        state.withLock { $0.file?.close() }
    }
}
