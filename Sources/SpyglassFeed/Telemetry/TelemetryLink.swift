import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SpyglassPipeline
import SpyglassTransport
import SpyglassIngest
import CSystem

/// A feed's MAVLink input (`--mavlink URL`): its own thread reads the endpoint, parses the
/// frames (``MAVLinkParser``: CRC-checked, bad ones counted and skipped), stamps each on arrival
/// with the same monotonic clock as the pictures, applies it to the vehicle's ``Telemetry``, and
/// appends it to the `.tlog` beside the recording (``TLogWriter``).
///
/// A `udpout://` link sends a ground station's HEARTBEAT once a second; a serial device that goes
/// away is opened again with backoff (0.1 s doubling to 8 s), as the network sources reconnect.
/// Any thread may read ``telemetry`` and ``counters``.
public final class TelemetryLink: TelemetryFeed {
    /// Where the telemetry comes from.
    public let endpoint: MAVLinkEndpoint
    private struct State {
        var telemetry = Telemetry()
        var counters = MAVLinkParser.Counters()
        var reconnects = 0
        var problem: String?
    }
    private let state = Mutex(State())
    private let port: Mutex<MAVLinkPort?>
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let tlog: TLogWriter?

    /// Opens the endpoint now, so that a port in use or a missing device is said before
    /// anything plays.
    /// - Parameters:
    ///   - endpoint: the `--mavlink` URL, parsed.
    ///   - tlogPath: where to write every frame received as a `.tlog` (nil: nowhere).
    /// - Throws: ``SourceError/open(_:)`` when a UDP endpoint (a port in use, a name that does
    ///   not resolve) or the `.tlog` cannot be opened. A serial device that is not there yet is
    ///   looked for with backoff instead.
    public init(endpoint: MAVLinkEndpoint, tlogPath: String?) throws {
        self.endpoint = endpoint
        if case .serial = endpoint {
            // A radio not plugged in yet is not a reason to hold the video: it is looked for
            // with backoff, as one that goes away.
            do { port = Mutex(try MAVLinkPort(endpoint)) } catch {
                Log.error("\(error): playing on, looking for it every few seconds")
                port = Mutex(nil)
                state.withLock { $0.problem = "\(error)" }
            }
        } else {
            port = Mutex(try MAVLinkPort(endpoint))
        }
        tlog = try tlogPath.map { try TLogWriter(path: $0) }
    }

    /// The vehicle's state now (a copy).
    public var telemetry: Telemetry { state.withLock { $0.telemetry } }
    /// The parser's counts: frames, CRC errors, unknown messages, bytes skipped.
    public var counters: MAVLinkParser.Counters { state.withLock { $0.counters } }
    /// Times a serial device was opened again after it went away.
    public var reconnects: Int { state.withLock { $0.reconnects } }
    /// What is wrong with the link now (a device gone, a read error); nil when it reads.
    public var problem: String? { state.withLock { $0.problem } }
    public func telemetry(forPictureAt pictureWallMicros: UInt64?) -> (state: Telemetry, nowMicros: UInt64) {
        (telemetry, MonotonicClock.nowMicros())
    }

    /// The `.tlog` being written, if any.
    public var tlogPath: String? { tlog?.path }
    /// The `.tlog` stopped on a failed write (a full disk).
    public var tlogFailed: Bool { tlog?.failed ?? false }

    /// Starts the link's thread (once).
    public func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let t = Thread { [self] in
            _ = spy_name_this_thread("mavlink")
            run()
            done.signal()
        }
        t.start()
    }

    /// Stops the thread (within 100 ms) and closes the `.tlog`. Any thread; once is enough.
    public func stop() {
        stopFlag.store(true, ordering: .relaxed)
        if started.load(ordering: .relaxed) { done.wait(); done.signal() }
        tlog?.close()
    }

    private func run() {
        var current = port.withLock { $0.take() }
        var parser = MAVLinkParser()
        var sequence: UInt8 = 0, lastHeartbeat: UInt64 = 0, backoffMillis: Int32 = 100
        while !stopFlag.load(ordering: .relaxed) {
            guard let open = current else {
                // Closed first: a serial device's old node must not be opened again. The parser
                // goes on (its counts too); a frame cut by the unplugging is one drop.
                current = reopen(after: &backoffMillis)
                continue
            }
            let now = MonotonicClock.nowMicros()
            if now - min(now, lastHeartbeat) >= 1_000_000, case .udpOut = endpoint {
                open.send(MAVLinkHeartbeat.gcsFrame(sequence: sequence))
                sequence &+= 1
                lastHeartbeat = now
            }
            do {
                let bytes = try open.read(timeoutMillis: 100)
                if !bytes.isEmpty {
                    var frames = parser.push(bytes)
                    // A datagram holds whole frames (MAVLink over UDP): one cut short is a counted
                    // drop at once, not bytes held until later datagrams complete it wrongly.
                    if case .serial = endpoint {} else { frames += parser.finish() }
                    take(frames, parser.counters, arrivalMicros: MonotonicClock.nowMicros())
                    backoffMillis = 100
                }
            } catch {
                state.withLock { $0.problem = "\(error)" }
                current = nil
            }
        }
    }

    /// Applies the frames read and writes them to the `.tlog`, stamped with the wall clock.
    private func take(_ frames: [MAVLinkFrame], _ counters: MAVLinkParser.Counters, arrivalMicros: UInt64) {
        let wall = UInt64(max(0, Int64(bitPattern: arrivalMicros) + MonotonicClock.wallMinusMonotonicMicros))
        state.withLock { s in
            for f in frames { s.telemetry.apply(f, arrivalMicros: arrivalMicros) }
            s.counters = counters
            s.problem = nil
        }
        for f in frames { tlog?.append(TLog.record(frame: f, utcMicros: wall)) }
    }

    /// Waits the backoff (in 100 ms steps, so a stop is not held up) and opens the endpoint again.
    private func reopen(after backoffMillis: inout Int32) -> MAVLinkPort? {
        var waited: Int32 = 0
        while waited < backoffMillis && !stopFlag.load(ordering: .relaxed) { usleep(100_000); waited += 100 }
        backoffMillis = min(8_000, backoffMillis * 2)
        guard !stopFlag.load(ordering: .relaxed), let p = try? MAVLinkPort(endpoint) else { return nil }
        state.withLock { $0.reconnects += 1; $0.problem = nil }
        Log.info("--mavlink \(endpoint): open again")
        return p
    }
}
