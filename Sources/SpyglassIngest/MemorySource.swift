import SpyglassPipeline

/// A source that plays a script from memory on a ``ManualClock``: chunks with their arrival
/// times, silences, a sender that leaves or connects. The pipeline's tests run on it with no
/// socket and no sleep (swift-nio's `EmbeddedChannel` is the model); every time the feed sees
/// comes from the script.
///
/// Each read moves the clock: to a chunk's arrival before delivering it, or through a silence
/// by the feed's own poll timeout (`.timeout` each time) until the silence ends. After the last
/// step it reports `.end`.
public final class MemorySource: ByteSource {
    /// One step of the script.
    public enum Step: Sendable {
        /// Bytes that arrive at `atMicros` (monotonic µs); `truncated`: a datagram cut by the
        /// receive buffer.
        case chunk([UInt8], atMicros: UInt64, truncated: Bool = false)
        /// Nothing arrives until `untilMicros`.
        case silence(untilMicros: UInt64)
        /// The sender goes away (a byte stream's sender closed).
        case disconnect
        /// A new sender connects.
        case connect
    }

    public let label: String
    public let deliversDatagrams: Bool
    public let deliversInRealTime: Bool
    public private(set) var counters = SourceCounters()
    private let clock: ManualClock
    private var steps: ArraySlice<Step>

    /// - Parameters:
    ///   - label: the name the feed logs.
    ///   - datagrams: each chunk is one datagram (RTP can be detected), else a byte stream.
    ///   - realTime: a live input (idle gaps end pictures, no pacing), else a file.
    ///   - clock: the clock the feed runs on, moved by this source.
    ///   - steps: the script.
    public init(label: String = "memory", datagrams: Bool, realTime: Bool = true, clock: ManualClock, steps: [Step]) {
        self.label = label
        deliversDatagrams = datagrams
        deliversInRealTime = realTime
        self.clock = clock
        self.steps = steps[...]
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard let step = steps.first else { return .end }
        switch step {
        case .chunk(let bytes, let at, let truncated):
            steps.removeFirst()
            clock.advance(toMicros: at)
            let n = buffer.copyPrefix(of: bytes)
            counters.datagrams += 1
            counters.bytes += n
            return .data(count: n, arrivalMicros: at, truncated: truncated || n < bytes.count)
        case .silence(let until):
            let next = clock.nowMicros() + UInt64(max(1, timeoutMicros))
            if next >= until { steps.removeFirst() }
            clock.advance(toMicros: min(next, until))
            return .timeout
        case .disconnect:
            steps.removeFirst()
            return .disconnected
        case .connect:
            steps.removeFirst()
            counters.connections += 1
            return .connected
        }
    }

    public func close() { steps = [] }
}
