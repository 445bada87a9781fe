import Foundation
import SpyglassIngest
import SpyglassFeed
import SpyglassDisplay

/// Options of `spyglass play` beyond the receiver's own.
public struct PlayOptions: Sendable {
    /// The receive path's own options.
    public var receiver = ReceiverOptions()
    /// SDL2 window, or headless.
    public enum DisplayKind: String, Sendable { case sdl, none }
    /// Where frames go.
    public var display: DisplayKind = .sdl
    /// `--framemd5 FILE`: one line per decoded frame, as `ffmpeg -f framemd5`.
    public var framemd5Path: String?
    /// `--summary FILE`: the exit summary as JSON.
    public var summaryPath: String?
    /// `--mavlink URL`: the feed's MAVLink telemetry (``MAVLinkEndpoint``): an OSD on its
    /// picture, `/metrics` gauges, a `.tlog` beside its recording.
    public var mavlink: MAVLinkEndpoint?
    /// `--bundle DIR`: keep the last `bundleSeconds` of what arrives and write a bug bundle
    /// (``BugBundle``) into DIR at the end and when `b` is pressed.
    public var bundleFolder: String?
    /// `--bundle-seconds S`: how much a bug bundle keeps (30 s).
    public var bundleSeconds = 30.0
    /// A replay's `.tlog` (found beside the recording): the OSD from it, in step with the pictures.
    public var replayTelemetry: TLogReplay?
    /// `--snapshot FILE`: the whole window as it was when it closed, as PPM (RGB24).
    public var snapshotPath: String?

    /// Draw a wall-clock time code under the picture, and read one from incoming pictures (optical glass-to-glass).
    public var clock = false
    /// A live source with no new frame for this long shows a stalled state, ms.
    public var stallMillis = 500.0
    /// Show frames libavcodec concealed (true), or hold the last clean one until a clean picture.
    public var showDamaged = true
    /// Initial window size; nil = 960x540, then the video's size when the first frame comes.
    public var windowSize: (width: Int, height: Int)?
    /// Window position on the screen; nil = chosen by the window system.
    public var windowPosition: (x: Int, y: Int)?
    /// Only errors and the summary.
    public var quiet = false
    /// `--status S`: headless, a status line per feed every S seconds (nil: 1 s on a terminal,
    /// 10 s otherwise; 0: none).
    public var statusSeconds: Double?
    /// Record what arrives here (`--record`), rotating by size or time.
    public var recordPath: String?
    /// Rotate recordings after this many bytes (0 = never).
    public var recordSplitBytes = 0
    /// Rotate recordings after this many µs (0 = never).
    public var recordSplitMicros: UInt64 = 0
    /// Per-frame timing log (`.csv` or `.jsonl`).
    public var latencyLogPath: String?
    /// How the sender's capture stamps are put on our clock (`--clock-offset-ms`, `--clock-offset relative`).
    public var captureClock: CaptureClock.Mode = .absolute(offsetMicros: 0)
    /// `--metrics [ADDR:]PORT`: serve Prometheus metrics there (nil: off).
    public var metrics: (address: String, port: UInt16)?
    /// Keep every frame's timing in memory for percentile tables (`bench`); `play` only writes the log.
    public var keepLatencySamples = false
    /// Also libavcodec's own warnings.
    public var verbose = false
    /// `--layout CxR`: the wall's grid (nil: chosen from the number of feeds).
    public var layout: WallLayout?
    /// `--gravity`: how pictures fill their tiles.
    public var gravity = Gravity.letterbox
    /// `name=` in a wall file: the feed's tile label (nil: the source).
    public var feedName: String?
    /// `--target-ms` (on the command line, or per feed in a wall file): the glass-to-glass target,
    /// ms, that the overlay and the tiles colour against (nil: 100 in the overlay, no chip colour).
    public var targetMillis: Double?
    /// Defaults: SDL window, no files written.
    public init() {}
}

/// Writes an RGB24 picture as binary PPM (P6).
/// - Throws: ``SourceError/open(_:)`` when the file cannot be created or written.
public func writePPM(path: String, width: Int, height: Int, rgb: [UInt8]) throws {
    let f = try OutputFile(path: path)
    f.write("P6\n\(width) \(height)\n255\n")
    f.write(rgb)
    f.close()
    if f.failed { throw SourceError.open("\(path): write failed: \(f.error ?? "")") }
}
