import CSRT
import SpyglassPipeline

/// MPEG-TS (or any byte stream) over SRT (Haivision's Secure Reliable Transport, through
/// libsrt in live mode): `srt://HOST:PORT` calls a listening sender, `srt://:PORT` (or
/// `?mode=listener`) waits for a calling one. See ``SRTURL`` for latency and passphrase.
///
/// Each read delivers one SRT message (up to 1316 bytes, 7 TS packets) at the moment libsrt
/// releases it: its send time plus the agreed latency. The messages are read as a byte stream,
/// so the MPEG-TS demultiplexer is chosen as for TCP. When the peer goes away the read reports
/// `.disconnected` once; then a caller connects again with backoff (0.1 s doubling to 2 s) and a
/// listener accepts the next caller, reporting `.connected` when the stream starts over.
/// SRT's own statistics (RTT, loss, retransmissions, drops) are in ``counters``.
public final class SRTSource: ByteSource {
    /// The URL without its passphrase.
    public let label: String
    /// Always true: the stream arrives in real time.
    public let deliversInRealTime = true
    /// True for a listener: a caller that leaves is followed by the next.
    public var acceptsNextSender: Bool { listener != nil }
    /// Messages and bytes over all connections, connections made or accepted, and SRT's
    /// statistics (this connection's added to those before it; nil before the first).
    public var counters: SourceCounters {
        var c = base
        c.srt = base.connections == 0 ? nil : stream == nil ? past : past + latest
        return c
    }
    /// The UDP port a listener is bound to (useful when 0 was asked for), else 0.
    public private(set) var listeningPort: UInt16 = 0

    private let url: SRTURL
    private var listener: SRTSocket?
    /// The connection carrying the stream (caller: once connected; listener: the accepted caller).
    private var stream: SRTSocket?
    /// A caller's connection attempt in progress.
    private var connecting: SRTSocket?
    private var base = SourceCounters()
    /// While a broken connection is read to its end: until when, µs.
    private var drainUntilMicros: UInt64?
    private var past = SRTStatistics()
    /// The current connection's statistics, read at most every ``statisticsMicros`` while data
    /// flows (libsrt forgets them once the connection breaks).
    private var latest = SRTStatistics()
    private var latestMicros: UInt64 = 0
    static let statisticsMicros: UInt64 = 100_000
    private var nextAttemptMicros: UInt64 = 0
    private var backoffMicros: UInt64 = 100_000
    /// Why the last call failed (each new reason is logged once).
    private var lastFailure = ""
    /// How long the first call may take before it is an error, µs (libsrt's own connect timeout is 3 s).
    static let firstConnectMicros = 5_000_000

    /// Opens the URL: a caller connects now (and fails now, like a TCP connection refused), a
    /// listener binds and waits for its first caller in ``read(into:timeoutMicros:)``.
    /// - Throws: ``SourceError/open(_:)``: the host does not resolve, the port is in use, the
    ///   listener did not answer, or refused us ("wrong passphrase (SRT_REJ_BADSECRET …)").
    /// - Parameter retryFirstConnection: a caller whose first call is not answered keeps
    ///   calling with the reconnection's backoff instead of throwing (a wall's feed whose sender
    ///   is not up yet); the failure is then ``connectionProblem``.
    public init(url: SRTURL, retryFirstConnection: Bool = false) throws {
        switch url.mode {
        case .listener:
            let l = try SRTSocket(url)
            try l.listen(host: url.host, port: url.port, label: url.description)
            listeningPort = l.localPort
            listener = l
            var bound = url
            bound.port = listeningPort
            self.url = bound
            label = bound.description
        case .caller:
            self.url = url
            label = url.description
            let s = try startCall()
            if retryFirstConnection {
                connecting = s
                return
            }
            guard s.wait(timeoutMicros: Self.firstConnectMicros) & Int32(SRT_EPOLL_OUT.rawValue) != 0,
                  s.state == SRTS_CONNECTED else {
                throw SourceError.open("\(label): \(s.state == SRTS_CONNECTING ? "no answer" : s.rejectReason)")
            }
            connected(s)
        }
    }

    deinit { close() }

    private func startCall() throws -> SRTSocket {
        let s = try SRTSocket(url)
        try s.startConnecting(host: url.host ?? "127.0.0.1", port: url.port, label: label)
        return s
    }

    private func connected(_ s: SRTSocket) {
        s.watchInput()
        stream = s
        base.connections += 1
        backoffMicros = 100_000
    }

    /// Waits up to about `timeoutMicros` µs for the next message and reads it.
    ///
    /// With no connection, a listener accepts the next caller and a caller tries again once
    /// the backoff has passed, instead of reading.
    /// - Returns: `.data` with the arrival time (µs, ``MonotonicClock``); `.disconnected` once
    ///   when the peer goes away; `.connected` when a new connection starts the stream over (not
    ///   for a listener's first caller); `.timeout` otherwise.
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard let s = stream else { return listener != nil ? acceptNext(timeoutMicros) : reconnect(timeoutMicros) }
        var n = s.receive(into: buffer)
        if n == 0 && s.wait(timeoutMicros: timeoutMicros) != 0 { n = s.receive(into: buffer) }
        if n == nil { n = drain(s, timeoutMicros) }
        switch n {
        case .some(0): return .timeout
        case .some(let count):
            base.datagrams += 1
            base.bytes += count
            let now = MonotonicClock.nowMicros()
            if now >= latestMicros + Self.statisticsMicros, let l = s.statistics { latest = l; latestMicros = now }
            return .data(count: count, arrivalMicros: now, truncated: false)
        case .none:
            peerLeft(s)
            return .disconnected
        }
    }

    /// The connection broke, but what arrived before is still held for its play time (a sender
    /// that closes at once leaves up to one latency of data there): read it as it falls due,
    /// for the latency and a little more, before the peer counts as gone.
    /// - Returns: a message's length, 0 while draining, nil when nothing more will come.
    private func drain(_ s: SRTSocket, _ timeoutMicros: Int) -> Int? {
        let now = MonotonicClock.nowMicros()
        let deadline = drainUntilMicros ?? now + UInt64(max(url.latencyMillis, latest.latencyMillis) + 20) * 1000
        drainUntilMicros = deadline
        guard now < deadline else { drainUntilMicros = nil; return nil }
        MonotonicClock.sleep(untilMicros: min(deadline, now + UInt64(min(max(0, timeoutMicros), 1_000))))
        return 0
    }

    /// The connection broke: keep its statistics, then wait for the next one.
    private func peerLeft(_ s: SRTSocket) {
        past = past + (s.statistics ?? latest)
        latest = SRTStatistics()
        s.close()
        stream = nil
        nextAttemptMicros = MonotonicClock.nowMicros() + backoffMicros
    }

    private func acceptNext(_ timeoutMicros: Int) -> SourceEvent {
        guard let l = listener, l.wait(timeoutMicros: timeoutMicros) != 0, let (s, peer) = l.accept() else { return .timeout }
        connected(s)
        Log.info("\(label): \(peer) connected" + (s.streamID.map { ", stream id '\(Self.printable($0))'" } ?? ""))
        return base.connections > 1 ? .connected : .timeout
    }

    /// Why the last call failed, while a caller has no connection.
    public var connectionProblem: String? {
        stream == nil && listener == nil && !lastFailure.isEmpty ? lastFailure : nil
    }

    private func reconnect(_ timeoutMicros: Int) -> SourceEvent {
        if let c = connecting { return connectStep(c, timeoutMicros) }
        let now = MonotonicClock.nowMicros()
        if now < nextAttemptMicros {
            MonotonicClock.sleep(untilMicros: min(nextAttemptMicros, now + UInt64(max(0, timeoutMicros))))
            return .timeout
        }
        do { connecting = try startCall() } catch { lastFailure = "\(error)"; retryLater() }
        return .timeout
    }

    private func connectStep(_ c: SRTSocket, _ timeoutMicros: Int) -> SourceEvent {
        guard c.wait(timeoutMicros: timeoutMicros) != 0 || c.state != SRTS_CONNECTING else { return .timeout }
        connecting = nil
        guard c.state == SRTS_CONNECTED else {
            let why = c.rejectReason
            if why != lastFailure { Log.info("\(label): reconnecting: \(why)"); lastFailure = why }
            let forGood = c.refusedForGood
            c.close()
            retryLater()
            // A refusal no new call mends (a stream id, a passphrase): ask again only now and then.
            if forGood { nextAttemptMicros = MonotonicClock.nowMicros() + Self.refusedRetryMicros }
            return .timeout
        }
        connected(c)
        lastFailure = ""
        Log.info("\(label): connected\(base.connections > 1 ? " again" : "")")
        return .connected
    }

    /// Time between calls after a refusal no new call mends, µs.
    static let refusedRetryMicros: UInt64 = 10_000_000

    /// A caller's stream id as one safe log line: control characters shown as `?`, at most 80.
    static func printable(_ text: String) -> String {
        let clean = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) })
        return clean.count > 80 ? String(clean.prefix(79)) + "…" : clean
    }

    private func retryLater() {
        backoffMicros = min(backoffMicros * 2, 2_000_000)
        nextAttemptMicros = MonotonicClock.nowMicros() + backoffMicros
    }

    /// Closes the connection (and the listening socket); no reconnection follows. Safe to call twice.
    public func close() {
        SRTSocket.close(&stream, &connecting, &listener)
    }
}
