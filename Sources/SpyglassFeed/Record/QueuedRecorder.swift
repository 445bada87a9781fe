import Foundation
import Synchronization
import SpyglassPipeline
import SpyglassTransport
import SpyglassIngest

/// A flight recorder on a thread of its own, fed through a bounded queue, so that the feed's
/// thread never waits on a slow disk (issue 20): a full queue drops access units (counted) until
/// the next random access point, where the recording goes on, and the feed plays on meanwhile.
///
/// The queue holds at most ``maxAccessUnits`` access units or ``maxBytes`` bytes (about 10 s of
/// a 30 fps feed, 64 MiB). Normally it is empty: the writer keeps up and a crash loses what the
/// container had not flushed, as before. ``close()`` waits up to ``closeTimeoutSeconds`` for the
/// writer to take what is queued; a disk that takes nothing more (a stalled network mount, a FIFO
/// nobody reads) is named as an error instead of holding the exit.
public final class QueuedRecorder: FlightRecorder, Sendable {
    /// The most access units and bytes queued for the writer.
    public static let maxAccessUnits = 300, maxBytes = 64 << 20
    /// How long ``close()`` waits for the writer, seconds.
    public static let closeTimeoutSeconds = 10.0

    private enum Job: Sendable {
        case record(AccessUnit, ParameterSetStore, UInt64)
        case replace(AccessUnit, ParameterSetStore, UInt64)
        case note(PlatformMetadata)
    }
    private struct Queue {
        var jobs: [Job] = []
        var bytes = 0
        var dropping = false
        var dropped = 0
        var closed = false
    }
    private struct Stats: Sendable {
        var accessUnits = 0, bytes = 0, rewritten = 0
        var files: [String] = []
        var error: String?
        var detail = ""
    }
    private let inner: Mutex<(any FlightRecorder)?>
    private let queue = Mutex(Queue())
    private let stats = Mutex(Stats())
    private let work = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the writer's thread for `recorder`, which from now on only that thread touches.
    public init(_ recorder: sending any FlightRecorder) {
        inner = Mutex(recorder)
        Thread.detachNewThread { [self] in run() }
    }

    public var accessUnits: Int { stats.withLock { $0.accessUnits } }
    public var bytes: Int { stats.withLock { $0.bytes } }
    public var files: [String] { stats.withLock { $0.files } }
    public var rewritten: Int { stats.withLock { $0.rewritten } }
    public var error: String? { stats.withLock { $0.error } }
    /// Access units the queue dropped because the writer fell behind.
    public var dropped: Int { queue.withLock { $0.dropped } }
    public var detail: String {
        let d = dropped
        return stats.withLock { $0.detail } + (d == 0 ? "" : "; \(d) access units not recorded: the disk was too slow (the recording went on at the next keyframe)")
    }
    public var telemetry: (any TelemetryFeed)? {
        get { nil }
        set { inner.withLock { $0?.telemetry = newValue } }
    }

    @discardableResult public func record(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        enqueue(.record(au, store, wallMicros), bytes: au.byteCount, randomAccess: au.isRandomAccessPoint)
    }

    @discardableResult public func replace(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        enqueue(.replace(au, store, wallMicros), bytes: au.byteCount, randomAccess: au.isRandomAccessPoint)
    }

    public func note(_ metadata: PlatformMetadata) { enqueue(.note(metadata), bytes: 0, randomAccess: false) }

    /// Queues a job, or drops it (counted) while the queue is full and until a random access
    /// point. - Returns: false once recording stopped on an error.
    @discardableResult private func enqueue(_ job: Job, bytes: Int, randomAccess: Bool) -> Bool {
        let accepted = queue.withLock { q -> Bool in
            guard !q.closed else { return false }
            if case .note = job { q.jobs.append(job); return true }
            if q.dropping && !randomAccess { q.dropped += 1; return false }
            if q.jobs.count >= Self.maxAccessUnits || q.bytes + bytes > Self.maxBytes {
                q.dropping = true
                q.dropped += 1
                return false
            }
            q.dropping = false
            q.jobs.append(job)
            q.bytes += bytes
            return true
        }
        if accepted { work.signal() }
        return stats.withLock { $0.error == nil }
    }

    /// Lets the writer take what is queued, then closes the files; waits at most
    /// ``closeTimeoutSeconds``.
    public func close() {
        queue.withLock { $0.closed = true }
        work.signal()
        if finished.wait(timeout: .now() + Self.closeTimeoutSeconds) == .timedOut {
            let (left, dropped) = queue.withLock { ($0.jobs.count, $0.dropped) }
            let why = "--record: the disk took nothing for \(Int(Self.closeTimeoutSeconds)) s: \(left) access units still queued and "
                + "\(dropped) dropped while it was too slow were not recorded, and the last file may lack its end"
            Log.error(why)
            stats.withLock { $0.error = $0.error ?? why }
        }
    }

    private func run() {
        while true {
            work.wait()
            while let job = queue.withLock({ q -> Job? in
                guard !q.jobs.isEmpty else { return nil }
                let j = q.jobs.removeFirst()
                if case .record(let au, _, _) = j { q.bytes -= au.byteCount } else if case .replace(let au, _, _) = j { q.bytes -= au.byteCount }
                return j
            }) {
                write(job)
            }
            if queue.withLock({ $0.closed && $0.jobs.isEmpty }) {
                inner.withLock { $0?.close() }
                publish()
                finished.signal()
                return
            }
        }
    }

    private func write(_ job: Job) {
        inner.withLock { r in
            guard let r else { return }
            switch job {
            case .record(let au, let store, let wall): r.record(au, store: store, wallMicros: wall)
            case .replace(let au, let store, let wall): r.replace(au, store: store, wallMicros: wall)
            case .note(let m): r.note(m)
            }
        }
        publish()
    }

    /// Copies the writer's counts where the feed's thread reads them without waiting on a write.
    private func publish() {
        let s = inner.withLock { r in
            r.map { Stats(accessUnits: $0.accessUnits, bytes: $0.bytes, rewritten: $0.rewritten, files: $0.files, error: $0.error, detail: $0.detail) }
        }
        if let s { stats.withLock { $0 = s } }
    }
}
