import Synchronization
import SpyglassPipeline
import SpyglassTransport

/// The platform a stream's KLV (MISB ST 0601) describes, as telemetry for the OSD: its position,
/// true altitude and heading, stamped on arrival with the pictures' clock. Fed by the feed's
/// thread, read by the window's; nothing to show until a local set came.
public final class KLVTelemetry: TelemetryFeed {
    private let state = Mutex(Telemetry())

    public init() {}

    /// Takes a local set as it arrives.
    public func note(_ platform: PlatformMetadata) {
        let now = MonotonicClock.nowMicros()
        state.withLock { $0.apply(platform, arrivalMicros: now) }
    }

    public func telemetry(forPictureAt pictureWallMicros: UInt64?) -> (state: Telemetry, nowMicros: UInt64) {
        let t = state.withLock { $0 }
        return (t, t.lastMessageMicros == nil ? 0 : MonotonicClock.nowMicros())
    }
}
