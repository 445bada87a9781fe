import SpyglassTransport

/// Where a tile's OSD gets the vehicle's state: a live MAVLink input (``TelemetryLink``: the
/// newest state, on the monotonic clock) or a recording's `.tlog` in a replay (``TLogReplay``:
/// the state as it was when the picture shown was recorded).
public protocol TelemetryFeed: Sendable {
    /// The vehicle's state to draw with a picture, and the time to age it against (the same
    /// clock as the state's arrival stamps).
    /// - Parameter pictureWallMicros: the recorded wall-clock time (µs since the epoch) of the
    ///   picture shown, in a replay; nil for a live picture.
    func telemetry(forPictureAt pictureWallMicros: UInt64?) -> (state: Telemetry, nowMicros: UInt64)
}
