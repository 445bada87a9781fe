import SpyglassFeed
/// One feed as the wall sees it: its pipeline (state, metrics), the slot its ``WindowSink``
/// fills, and how it is labelled; or a feed that could not even start, with the reason.
public struct WallFeed: Sendable {
    /// The feed's pipeline, running on its own thread (nil when it could not start).
    public let pipeline: Pipeline?
    /// Where its newest picture waits for the window (nil when it could not start).
    public let slot: FrameSlot?
    /// Its per-frame log, if any.
    public let latency: LatencyRecorder?
    /// The tile's label: `name=` from the wall file, else the source.
    public let name: String
    /// The source delivers in real time: a pause in it is a stall.
    public let live: Bool
    /// Why the feed could not start (its source could not be opened), one line; nil when it runs.
    public let failure: String?
    /// The feed's glass-to-glass target, ms (`--target-ms`); colours its ``LatencyChip``.
    public let targetMillis: Double?
    /// Shrinks the feed's pictures for its tile on the feed's thread (nil: the wall scales them).
    public let prescaler: TilePrescaler?
    /// What arrives is being recorded (`--record`): a REC tag stays on the picture.
    public let recording: Bool
    /// The recording being replayed: the replay keys act on it, and its progress bar is drawn
    /// along the tile's bottom (nil: a live feed or a file played as it is).
    public let replay: RecordingSource?
    /// The vehicle's MAVLink telemetry (`--mavlink`, or a replayed recording's `.tlog`): the
    /// OSD over the picture (nil: none).
    public let telemetry: (any TelemetryFeed)?

    /// A running feed. - Parameters: see the properties.
    public init(pipeline: Pipeline, slot: FrameSlot, latency: LatencyRecorder?, name: String, live: Bool,
                targetMillis: Double? = nil, prescaler: TilePrescaler? = nil, recording: Bool = false,
                replay: RecordingSource? = nil, telemetry: (any TelemetryFeed)? = nil) {
        self.recording = recording
        self.telemetry = telemetry
        self.replay = replay
        self.pipeline = pipeline
        self.slot = slot
        self.latency = latency
        self.name = name
        self.live = live
        self.targetMillis = targetMillis
        self.prescaler = prescaler
        failure = nil
    }

    private init(name: String, failure: String) {
        pipeline = nil
        slot = nil
        latency = nil
        live = false
        targetMillis = nil
        prescaler = nil
        recording = false
        replay = nil
        telemetry = nil
        self.name = name
        self.failure = failure
    }

    /// A feed whose source could not be opened: its tile says "failed" and why, and keeps its place.
    public static func failed(name: String, reason: String) -> WallFeed { WallFeed(name: name, failure: reason) }
}
