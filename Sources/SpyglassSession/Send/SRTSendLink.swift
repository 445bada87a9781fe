import CSRT
import SpyglassPipeline
import SpyglassIngest

/// The sending end of an SRT connection (live mode) for `spyglass send`: a caller connects to a
/// listening receiver, a listener waits for a calling one. When the receiver goes away the
/// stream goes on: the caller connects again (every 0.5 s), the listener accepts the next.
final class SRTSendLink {
    private let url: SRTURL
    private var listener: SRTSocket?
    private var connecting: SRTSocket?
    private var stream: SRTSocket?
    private var nextAttemptMicros: UInt64 = 0
    /// The last reason a call failed (each new one is logged once).
    private var lastFailure = ""
    /// Set when the listener refused our passphrase (or our lack of one): calling again cannot
    /// succeed, so the sender stops with this line rather than retry for ever.
    private(set) var refusal: String?
    private var past = SRTStatistics()
    /// Time between calls while no receiver answers, µs.
    static let retryMicros: UInt64 = 500_000

    /// Opens the URL: a listener binds now, a caller starts its first call.
    /// - Throws: ``SourceError/open(_:)`` when the host does not resolve or the port is in use.
    init(url: SRTURL) throws {
        self.url = url
        if url.mode == .listener {
            let l = try SRTSocket(url)
            try l.listen(host: url.host, port: url.port, label: url.description)
            listener = l
        } else {
            connecting = try call()
        }
    }

    deinit { close() }

    private func call() throws -> SRTSocket {
        let s = try SRTSocket(url)
        try s.startConnecting(host: url.host ?? "127.0.0.1", port: url.port, label: url.description)
        return s
    }

    /// Makes sure a receiver is connected, waiting at most about `timeoutMicros`.
    /// - Returns: true when a send can go out now.
    func waitForReceiver(timeoutMicros: Int) -> Bool {
        if stream != nil { return true }
        if let l = listener {
            guard l.wait(timeoutMicros: timeoutMicros) != 0, let (s, peer) = l.accept() else { return false }
            Log.info("\(url): \(peer) connected")
            stream = s
            return true
        }
        return callStep(timeoutMicros)
    }

    private func callStep(_ timeoutMicros: Int) -> Bool {
        guard let c = connecting else {
            let now = MonotonicClock.nowMicros()
            if now >= nextAttemptMicros {
                connecting = try? call()
                nextAttemptMicros = now + Self.retryMicros   // also when the call could not even start
            } else {
                MonotonicClock.sleep(untilMicros: min(nextAttemptMicros, now + UInt64(max(0, timeoutMicros))))
            }
            return false
        }
        guard c.wait(timeoutMicros: timeoutMicros) != 0 || c.state != SRTS_CONNECTING else { return false }
        connecting = nil
        guard c.state == SRTS_CONNECTED else {
            let why = c.rejectReason
            if c.refusedForGood {
                refusal = "\(url): the receiver refused this stream: \(why)"
                c.close()
                return false
            }
            if why != lastFailure { Log.info("\(url): cannot connect: \(why); trying again"); lastFailure = why }
            c.close()
            nextAttemptMicros = MonotonicClock.nowMicros() + Self.retryMicros
            return false
        }
        Log.info("\(url): connected")
        lastFailure = ""
        stream = c
        return true
    }

    /// Sends `bytes` as messages of at most 1316 bytes (7 TS packets).
    /// - Returns: messages and bytes that went out, and whether one failed. A broken connection
    ///   is closed (logged once) and the next receiver is awaited.
    func send(_ bytes: UnsafeRawBufferPointer) -> (messages: Int, bytes: Int, failed: Bool) {
        guard let s = stream else { return (0, 0, true) }
        var sent = (messages: 0, bytes: 0, failed: false)
        for off in stride(from: 0, to: bytes.count, by: SRTSocket.liveMessageBytes) {
            let n = min(SRTSocket.liveMessageBytes, bytes.count - off)
            if s.send(UnsafeRawBufferPointer(rebasing: bytes[off..<(off + n)])) {
                sent.messages += 1
                sent.bytes += n
            } else {
                sent.failed = true
                if s.state != SRTS_CONNECTED { receiverLeft(s); break }
            }
        }
        return sent
    }

    private func receiverLeft(_ s: SRTSocket) {
        Log.info("\(url): the receiver went away; \(listener != nil ? "waiting for the next one" : "reconnecting")")
        if let last = s.statistics { past = past + last }
        s.close()
        stream = nil
        nextAttemptMicros = MonotonicClock.nowMicros() + Self.retryMicros
    }

    /// SRT's statistics over every connection so far (retransmissions sent, drops …).
    var statistics: SRTStatistics { stream?.statistics.map { past + $0 } ?? past }

    /// Lets the receiver play out what is in flight, then closes: waits (at most 2 s) until
    /// every packet is acknowledged, then for the receiver's latency. A live-mode socket closed
    /// at once (libsrt's default `SRTO_LINGER` 0 in live mode) loses the stream's last
    /// latency's worth of pictures at a receiver that does not read a broken connection to its end.
    func finish() {
        if let s = stream {
            let deadline = MonotonicClock.nowMicros() + 2_000_000
            while let l = s.statistics, l.packetsUnacknowledged > 0, MonotonicClock.nowMicros() < deadline {
                MonotonicClock.sleep(untilMicros: MonotonicClock.nowMicros() + 1_000)
            }
            let latency = UInt64(max(url.latencyMillis, s.statistics?.peerLatencyMillis ?? 0))
            MonotonicClock.sleep(untilMicros: MonotonicClock.nowMicros() + (latency + 20) * 1000)
            past = statistics
        }
        close()
    }

    /// Closes every socket. Safe to call twice.
    func close() {
        SRTSocket.close(&stream, &connecting, &listener)
    }
}
