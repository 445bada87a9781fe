#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization
import SpyglassTransport
import SpyglassPipeline
import SpyglassIngest
import SpyglassBitstream

/// One feed: a source and the stages after it, on the feed's own thread.
///
/// ```
/// ByteSource ─chunk+arrival µs─▶ Depacketizer ─DepacketizerEvent─▶ AccessUnitStage ─AccessUnit─▶
///     DecodeGate ─decode/hold/skip─▶ VideoDecoding ─DecodedFrame─▶ FrameSink chain
/// ```
/// It has an id and a label, is started, stopped and joined, publishes its state changes as
/// ``PipelineEvent``s and keeps its numbers in one ``MetricsRegistry``. Feeds share nothing, so
/// one feed's bad input, end or error never stops or slows another.
public final class Pipeline: Sendable {
    /// Position of the feed on the command line, from 1 (the `{n}` of output paths).
    public let id: Int
    /// The source as the user named it.
    public let label: String
    /// This feed's counters and stage histograms.
    public let metrics: MetricsRegistry
    private let stopFlag = StopFlag()
    private let status: FeedStatus
    private let done = DispatchSemaphore(value: 0)
    /// The stages, handed from the creating thread to the feed's thread (Mutex transfers them).
    private let handOver: Mutex<FeedLoop?>
    private let datagramSource: Bool
    private let countsAre: String
    private let started: UInt64
    private let clock: any FeedClock

    /// - Parameters:
    ///   - id: the feed's number, from 1.
    ///   - source: an opened source; from now on only the pipeline's thread uses it.
    ///   - options: the receive path's options.
    ///   - metrics: the feed's registry (made first, so that the sinks can count into it too).
    ///   - sink: the first stage after the decoder; used on the pipeline's thread only.
    ///   - decoderFactory: builds decoders (libavcodec's ``VideoDecoder`` by default).
    ///   - observers: probes of access units and datagrams (``FeedObservers``).
    ///   - onEvent: state and codec changes, called on the pipeline's thread.
    ///   - clock: the feed's clock (the monotonic one; a ``ManualClock`` with a ``MemorySource`` in tests).
    public init(id: Int, source: sending ByteSource, options: ReceiverOptions, metrics: MetricsRegistry = MetricsRegistry(),
                sink: sending any FrameSink,
                decoderFactory: sending @escaping DecoderFactory = { try VideoDecoder(settings: $0) },
                observers: sending FeedObservers = FeedObservers(),
                onEvent: @escaping @Sendable (PipelineEvent) -> Void = { _ in }, clock: any FeedClock = SystemClock()) {
        self.id = id
        self.clock = clock
        started = clock.nowMicros()
        self.metrics = metrics
        label = source.label
        datagramSource = source.deliversDatagrams
        countsAre = source.countsAre
        status = FeedStatus(onEvent: onEvent)
        let loop = FeedLoop(source: source, options: options, sink: sink, decoderFactory: decoderFactory,
                            observers: observers, metrics: metrics, stop: stopFlag, status: status, clock: clock)
        handOver = Mutex(loop)
    }

    /// The state now (any thread).
    public var state: PipelineState { status.state }

    /// Starts the feed on its own thread.
    public func start() {
        let t = Thread { [self] in
            _ = spy_name_this_thread("feed \(id)")
            Log.setFeedOfThisThread(id)
            runHere()
        }
        t.stackSize = 4 << 20
        t.start()
    }

    /// Runs the feed on the calling thread until it ends (for `probe`, which has one feed and
    /// nothing else to do). Use either this or ``start()``, once.
    public func runHere() {
        guard let loop = handOver.withLock({ $0.take() }) else { return }
        do {
            try loop.run()
            status.set(.ended)
        } catch {
            status.set(.failed("\(error)"))
        }
        loop.sink.finish()
        done.signal()
    }

    /// Asks the feed to end soon (within one poll of its source, 50 ms at most). Any thread.
    public func stop() { stopFlag.set() }

    /// True once ``stop()`` was called.
    public var isStopping: Bool { stopFlag.isSet }

    /// Waits until the feed's thread has ended. Safe to call more than once.
    public func join() {
        _ = join(timeoutMicros: nil)
    }

    /// Waits up to `micros` (nil: for ever) for the end. Returns true when the feed has ended.
    public func join(timeoutMicros micros: Int?) -> Bool {
        if joined.load(ordering: .acquiring) { return true }
        if let micros {
            guard done.wait(timeout: .now() + .microseconds(micros)) == .success else { return false }
        } else {
            done.wait()
        }
        done.signal()   // leave it signalled for other joiners
        joined.store(true, ordering: .releasing)
        return true
    }
    private let joined = Atomic<Bool>(false)

    /// The error that ended the feed, if one did (one line).
    public var error: String? {
        if case .failed(let why) = status.state { return why }
        return nil
    }

    /// The numbers so far, as the summary line and `--summary` JSON show them.
    public var summary: FeedSummary {
        FeedSummary(source: label, datagramSource: datagramSource, countsAre: countsAre, snapshot: metrics.snapshot(),
                    durationSeconds: Double(clock.nowMicros() - started) / 1e6)
    }
}

/// A feed's state, shared by the pipeline (any thread reads it) and its loop (which sets it).
package final class FeedStatus: Sendable {
    private let current = Mutex(PipelineState.waitingForData)
    private let onEvent: @Sendable (PipelineEvent) -> Void

    init(onEvent: @escaping @Sendable (PipelineEvent) -> Void) { self.onEvent = onEvent }

    var state: PipelineState { current.withLock { $0 } }

    /// Sets the state; a failure is final. Tells the owner when it changed.
    func set(_ s: PipelineState) {
        let changed = current.withLock { st -> Bool in
            if st == s { return false }
            if case .failed = st { return false }
            st = s
            return true
        }
        if changed { onEvent(.state(s)) }
    }

    /// Tells the owner the codec.
    func codec(_ name: String) { onEvent(.codec(name)) }
}

/// Probes that look at what a feed's stages produce, on the feed's thread (`probe` uses them).
public struct FeedObservers {
    /// Each complete access unit, with the parameter sets seen so far.
    public var accessUnit: ((AccessUnit, ParameterSetStore) -> Void)?
    /// An access unit passed to ``accessUnit`` before, again (same ``AccessUnit/index``): a NAL
    /// unit an idle flush had cut is back in it whole (the rest of it came). This version
    /// replaces the one passed before; the recorder rewrites it. Called whether or not the
    /// decoder could decode it again (the repair's budget), so that what is kept is what came.
    public var accessUnitRepaired: ((AccessUnit, ParameterSetStore) -> Void)?
    /// Each datagram's (or read's) size, bytes.
    public var datagram: ((Int) -> Void)?
    /// Each datagram's (or read's) bytes as they came, with their arrival (monotonic µs): the
    /// bug bundle's ring (``BundleRing``) keeps the last seconds of them.
    public var rawInput: ((UnsafeRawBufferPointer, UInt64) -> Void)?
    /// The parameter sets, at the end of the run.
    public var end: ((ParameterSetStore?) -> Void)?
    /// Each KLV local set (MISB ST 0601) of the stream's metadata.
    public var metadata: ((PlatformMetadata) -> Void)?
    public init() {}
}
