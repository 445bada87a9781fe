/// One feed as the wall sees it: its pipeline (state, metrics), the slot its ``WindowSink``
/// fills, and how it is labelled.
public struct WallFeed: Sendable {
    /// The feed's pipeline, running on its own thread.
    public let pipeline: Pipeline
    /// Where its newest picture waits for the window.
    public let slot: FrameSlot
    /// Its per-frame log, if any.
    public let latency: LatencyRecorder?
    /// The tile's label: `name=` from the wall file, else the source.
    public let name: String
    /// The source delivers in real time: a pause in it is a stall.
    public let live: Bool

    /// - Parameters: see the properties.
    public init(pipeline: Pipeline, slot: FrameSlot, latency: LatencyRecorder?, name: String, live: Bool) {
        self.pipeline = pipeline
        self.slot = slot
        self.latency = latency
        self.name = name
        self.live = live
    }
}
