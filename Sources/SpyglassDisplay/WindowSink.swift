import SpyglassPipeline
import SpyglassFeed
/// Hands pictures to a window on the main thread through a ``FrameSlot`` (newest wins) and wakes
/// it. A picture replaced before the window took it is counted and logged as dropped.
public final class WindowSink: FrameSink {
    /// The slot the window takes pictures from.
    public let slot: FrameSlot
    private let wake: WakeTarget
    private let metrics: MetricsRegistry
    private let latency: LatencyRecorder?
    private let prescaler: TilePrescaler?

    /// - Parameters:
    ///   - slot: the hand-off to the window.
    ///   - metrics: counts replaced pictures as ``Metric/framesDropped``.
    ///   - latency: logs replaced pictures as dropped.
    ///   - prescaler: shrinks each picture for its wall tile before it reaches the slot (nil: none).
    ///   - wake: the window to wake (aimed by whoever runs the window; none: no wake-up).
    public init(slot: FrameSlot, metrics: MetricsRegistry, latency: LatencyRecorder?, prescaler: TilePrescaler? = nil,
                wake: WakeTarget) {
        self.slot = slot
        self.metrics = metrics
        self.latency = latency
        self.prescaler = prescaler
        self.wake = wake
    }

    public func consume(_ frame: DecodedFrame) {
        var frame = frame
        prescaler?.prepare(&frame)
        if let old = slot.put(frame) {
            PresentationStamps.recordDropped(old, metrics: metrics, latency: latency)
        }
        wake.wake()
    }

    public func finish() {
        slot.close()
        wake.wake()
    }
}
