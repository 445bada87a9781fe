import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// Runs the real receive path in-process (a ``Pipeline``: real sockets, real libavcodec,
/// headless sink) and collects what came out.
final class Harness: Sendable {
    struct Result {
        var hashes: [Fixtures.FrameHash] = []
        var sizes: [String] = []
        var timings: [FrameTiming] = []
        var presentedAccessUnits: [Int] = []
        var damaged: [Bool] = []
        var summary = FeedSummary()
        /// The most pictures the sink had been given that were still alive (held by the
        /// pipeline) when the next one came: a repair that held its whole run would show here.
        var mostEarlierPicturesAlive = 0
    }

    /// A picture the sink saw, not kept alive by the sink.
    private struct Seen: Sendable {
        weak var picture: DecodedPicture?
    }

    /// The end of the chain: stamps "presented" and keeps what the tests compare.
    final class CollectSink: FrameSink, Sendable {
        let result = Mutex(Result())
        private let seen = Mutex([Seen]())
        func consume(_ frame: DecodedFrame) {
            var frame = frame
            frame.timing.presentedMicros = MonotonicClock.nowMicros()
            let (size, md5) = FrameMD5Writer.hash(frame)
            let alive = seen.withLock { s in
                s.removeAll { $0.picture == nil }
                let n = s.count
                s.append(Seen(picture: frame.picture))
                return n
            }
            result.withLock { r in
                r.mostEarlierPicturesAlive = max(r.mostEarlierPicturesAlive, alive)
                r.hashes.append(.init(size: size, md5: md5))
                r.sizes.append("\(frame.width)x\(frame.height)")
                r.timings.append(frame.timing)
                r.presentedAccessUnits.append(frame.accessUnitIndex)
                r.damaged.append(frame.damaged)
            }
        }

        /// A repair takes back what was collected for access unit `index` and after, as the
        /// framemd5 file does: the re-decoded pictures come again.
        func rewind(toAccessUnit index: Int) {
            result.withLock { r in
                guard let i = r.presentedAccessUnits.firstIndex(where: { $0 >= index }) else { return }
                r.hashes.removeSubrange(i...); r.sizes.removeSubrange(i...); r.timings.removeSubrange(i...)
                r.presentedAccessUnits.removeSubrange(i...); r.damaged.removeSubrange(i...)
            }
        }
    }

    let pipeline: Pipeline
    private let collected = CollectSink()

    /// - Parameter clock: the feed's clock (a ``ManualClock`` with a ``MemorySource``).
    init(source: sending ByteSource, options: ReceiverOptions, observers: sending FeedObservers = FeedObservers(),
         clock: any FeedClock = SystemClock()) {
        VideoDecoder.setLibraryLogging(verbose: false)
        pipeline = Pipeline(id: 1, source: source, options: options, sink: collected, observers: observers, clock: clock)
    }

    /// The error that ended the run, if any.
    var error: String? { pipeline.error }

    /// Starts the pipeline on its own thread.
    func start() { pipeline.start() }

    /// Waits for the pipeline to end (frame limit, timeout, end of input). Returns what it saw.
    func finish() -> Result {
        pipeline.join()
        var r = collected.result.withLock { $0 }
        r.summary = pipeline.summary
        return r
    }

    /// Frames the sink has taken so far (safe from any thread).
    var framesSoFar: Int { collected.result.withLock { $0.hashes.count } }
    /// The pictures' hashes so far, in the order shown.
    var hashesSoFar: [Fixtures.FrameHash] { collected.result.withLock { $0.hashes } }

    /// Waits until the sink has taken `count` frames: the event a test waits for instead of a
    /// guessed sleep. False if `timeoutSeconds` passed first.
    func waitForFrames(_ count: Int, timeoutSeconds: Double = 10) -> Bool {
        Wait.until(timeoutSeconds: timeoutSeconds, pollMillis: 1) { framesSoFar >= count }
    }

    /// Decodes a file in-process, untimed.
    static func decodeFile(_ path: String, configure: (inout ReceiverOptions) -> Void = { _ in }) throws -> Result {
        var o = ReceiverOptions()
        o.untimed = true
        configure(&o)
        let h = Harness(source: try StreamFDSource.file(path: path), options: o)
        h.start()
        return h.finish()
    }

    /// Options for a live socket test: stop at `frames`, never hang.
    static func liveOptions(frames: Int, idleFlushMicros: Int = 200_000) -> ReceiverOptions {
        var o = ReceiverOptions()
        o.maxFrames = frames
        o.timeoutSeconds = 10
        o.idleFlushMicros = idleFlushMicros
        return o
    }
}

/// Sends test data to 127.0.0.1 over UDP or TCP.
enum Sender {
    /// Waits `micros` between two sends, as a real sender paces itself (never a wait for an event).
    static func pace(micros: UInt32) { usleep(micros) }

    /// Sends each of `items` and then waits `everyMicros`, as a real sender paces its access
    /// units: pacing a sender, never a wait for something to happen.
    /// - Parameter every: send the next one after this many items (1: wait after each).
    static func paced<S: Sequence>(_ items: S, everyMicros: UInt32, every: Int = 1, _ send: (S.Element) -> Void) {
        for (i, item) in items.enumerated() {
            send(item)
            if i % every == every - 1 || every == 1 { usleep(everyMicros) }
        }
    }

    /// One socket per destination port: one sender is one transport address, as a real encoder's
    /// (a receiver listens to one sender at a time, ``SenderLatch``).
    private static let sockets = Mutex<[UInt16: Int32]>([:])

    /// A new UDP socket: another sender than ``udp(port:datagrams:pauseMicros:yieldEvery:via:)``'s
    /// own (close it when done).
    static func newUDPSocket() -> Int32 { socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0) }

    /// One UDP datagram per element of `datagrams`, to 127.0.0.1:port, optionally pausing; from
    /// the port's own sender socket, or from `fd`.
    static func udp(port: UInt16, datagrams: [[UInt8]], pauseMicros: (Int) -> Int = { _ in 0 }, yieldEvery: Int = 64,
                    via fd: Int32? = nil) {
        let s = fd ?? sockets.withLock { all in
            if let s = all[port] { return s }
            let s = newUDPSocket()
            all[port] = s
            return s
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        for (i, d) in datagrams.enumerated() {
            let p = pauseMicros(i)
            if p > 0 { usleep(UInt32(p)) }
            _ = withUnsafePointer(to: &addr) { ap in
                ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                    d.withUnsafeBytes { sendto(s, $0.baseAddress, d.count, 0, sa, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            // Loopback has no pacing: yield now and then so the receiver keeps up.
            if yieldEvery > 0 && i % yieldEvery == yieldEvery - 1 { usleep(1000) }
        }
    }

    /// Writes all of `chunks` to a connected TCP socket `fd`, pausing as asked, then closes it
    /// (unless `closing` is false).
    static func tcpWrite(fd: Int32, chunks: [[UInt8]], pauseMicros: (Int) -> Int = { _ in 0 }, closing: Bool = true) {
        for (i, c) in chunks.enumerated() {
            let p = pauseMicros(i)
            if p > 0 { usleep(UInt32(p)) }
            var off = 0
            while off < c.count {
                let n = c.withUnsafeBytes { send(fd, $0.baseAddress! + off, c.count - off, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                off += n
            }
        }
        if closing { close(fd) }
    }

    /// A UDP port on 127.0.0.1 that the kernel just handed out (and that is free again now).
    static func freeUDPPort() throws -> UInt16 {
        let s = try UDPSource(host: "127.0.0.1", port: 0)
        defer { s.close() }
        return s.boundPort
    }

    /// A source on an ephemeral port of 127.0.0.1 whose port + 1, where it binds RTCP once RTP
    /// comes, is free now. An ephemeral port's + 1 can be another test process's socket: the
    /// feed then logs "RTCP port … is taken" and the test's sender reports go to that socket
    /// (a sender report that was never counted, in a CI run of two test processes).
    static func rtpSource(allowFrom: [AddressPrefix] = []) throws -> UDPSource {
        for _ in 0..<100 {
            let source = try UDPSource(host: "127.0.0.1", port: 0, allowFrom: allowFrom)
            if source.boundPort < UInt16.max, let probe = try? UDPSource(host: "127.0.0.1", port: source.boundPort + 1) {
                probe.close()
                return source
            }
            source.close()
        }
        throw SourceError.open("no ephemeral UDP port with port + 1 free")
    }

    /// A TCP port on 127.0.0.1 that the kernel just handed out (and that is free again now).
    static func freeTCPPort() throws -> UInt16 {
        let (fd, port) = tcpListener()
        close(fd)
        return port
    }

    /// Connects to 127.0.0.1:port, retrying for up to 5 s while the listener starts.
    static func tcpConnect(port: UInt16) -> Int32 {
        for _ in 0..<500 {
            let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &addr) { ap in
                ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if rc == 0 { return s }
            close(s)
            usleep(10_000)
        }
        return -1
    }

    /// A listening TCP socket on 127.0.0.1 with a kernel-chosen port.
    static func tcpListener() -> (fd: Int32, port: UInt16) {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { ap in
            ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(s, 1)
        var sl = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { ap in
            ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &sl) }
        }
        return (s, UInt16(bigEndian: addr.sin_port))
    }

    /// Cuts `bytes` into pieces of random size in `sizes`.
    static func randomCuts(_ bytes: [UInt8], sizes: ClosedRange<Int>, seed: UInt64) -> [[UInt8]] {
        var rng = SeededRandom(seed: seed)
        var out: [[UInt8]] = []
        var off = 0
        while off < bytes.count {
            let n = min(bytes.count - off, rng.next(in: sizes))
            out.append(Array(bytes[off..<off + n]))
            off += n
        }
        return out
    }

    /// The access units of an Annex B file, each as Annex B bytes, split by an independent
    /// rule (ffprobe's packet sizes would need a container; here: our scanner + assembler,
    /// checked against ffmpeg's frame count by the tests that use it).
    static func accessUnits(of bytes: [UInt8]) -> [[UInt8]] {
        AccessUnitAssembler.accessUnits(ofAnnexB: bytes).1.map { $0.annexB() }
    }
}
