import Foundation
import Synchronization
import SpyglassPipeline
import SpyglassTransport
import SpyglassIngest

/// A recording's `.tlog` replayed beside its pictures: the OSD shows the vehicle's state as it
/// was when the picture shown was recorded (its index's wall-clock time), so pictures and
/// telemetry stay in step through pauses, seeks and speed changes.
///
/// The frames are applied in order on the `.tlog`'s own clock (µs since the epoch, as MAVProxy
/// stamps them); a seek back starts again from the first frame. Any thread.
public final class TLogReplay: TelemetryFeed {
    /// The `.tlog`'s path.
    public let path: String
    /// Records read (frames with their UTC stamps), oldest first.
    private let records: [(utcMicros: UInt64, frame: MAVLinkFrame)]
    private struct Cursor {
        var next = 0
        var state = Telemetry()
        var at: UInt64 = 0
    }
    private let cursor = Mutex(Cursor())

    /// Reads the whole `.tlog` (damaged records stepped over).
    /// - Throws: ``SourceError/open(_:)`` when it cannot be read.
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw SourceError.open("\(path): cannot read it") }
        self.path = path
        records = TLog.read([UInt8](data)).sorted { $0.utcMicros < $1.utcMicros }
    }

    /// Frames in the log.
    public var count: Int { records.count }
    /// The log's first and last stamps, µs since the epoch (nil when empty).
    public var span: ClosedRange<UInt64>? { records.first.flatMap { f in records.last.map { f.utcMicros...$0.utcMicros } } }

    public func telemetry(forPictureAt pictureWallMicros: UInt64?) -> (state: Telemetry, nowMicros: UInt64) {
        guard let wall = pictureWallMicros else { return (Telemetry(), 0) }
        return cursor.withLock { c in
            if wall < c.at { c = Cursor() }
            while c.next < records.count, records[c.next].utcMicros <= wall {
                c.state.apply(records[c.next].frame, arrivalMicros: records[c.next].utcMicros)
                c.next += 1
            }
            c.at = wall
            return (c.state, wall)
        }
    }
}
