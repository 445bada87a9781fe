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

    /// The largest `.tlog` a replay draws from (64 MiB: hours of a real vehicle's telemetry; a
    /// flood's log is not drawn).
    public static let maxBytes = 64 << 20

    /// Reads the `.tlog` (damaged records stepped over), keeping the messages the OSD draws.
    /// - Throws: ``SourceError/open(_:)`` when it is not a readable regular file, is larger than
    ///   ``maxBytes``, or holds no MAVLink frame.
    public init(path: String) throws {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular, let size = attributes?[.size] as? Int else {
            throw SourceError.open("\(path): not a readable file")
        }
        guard size <= Self.maxBytes else { throw SourceError.open("\(path): \(size >> 20) MiB, more than the \(Self.maxBytes >> 20) MiB a replay draws from") }
        guard let data = FileManager.default.contents(atPath: path) else { throw SourceError.open("\(path): cannot read it") }
        self.path = path
        let drawn: Set<UInt32> = [0, 1, 24, 30, 33, 74, 109, 147, 242, 253]
        records = TLog.read([UInt8](data)).compactMap { r in
            guard drawn.contains(r.frame.messageID) else { return nil }
            var f = r.frame
            f.raw = []   // the OSD needs the decoded payload only
            return (r.utcMicros, f)
        }.sorted { $0.utcMicros < $1.utcMicros }
        guard !records.isEmpty else { throw SourceError.open("\(path): no MAVLink frame in it") }
    }

    /// True when the log's time overlaps `span` (µs since the epoch), give or take 5 s.
    public func overlaps(_ span: ClosedRange<UInt64>) -> Bool {
        guard let mine = self.span else { return false }
        return mine.lowerBound <= span.upperBound + 5_000_000 && span.lowerBound <= mine.upperBound + 5_000_000
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
