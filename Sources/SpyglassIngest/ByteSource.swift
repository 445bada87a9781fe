#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassTransport

/// What one read from a source produced.
public enum SourceEvent: Equatable, Sendable {
    /// `count` bytes are in the buffer. `truncated`: a datagram was larger than the buffer (MSG_TRUNC)
    /// and its tail was lost.
    case data(count: Int, arrivalMicros: UInt64, truncated: Bool)
    /// A zero-length datagram (keep-alive). Counted, never passed on.
    case emptyDatagram
    /// No data within the timeout.
    case timeout
    /// The input ended (end of file; a TCP peer closed when no reconnection is wanted).
    case end
    /// A TCP sender went away; the source reconnects (client) or accepts the next one (listen).
    case disconnected
    /// A new TCP sender is connected (after the first): the byte stream starts over.
    case connected
}

/// Counters every source keeps.
public struct SourceCounters: Equatable, Sendable, Codable {
    /// Datagrams (UDP) or reads (TCP, file, stdin) that delivered bytes.
    public var datagrams = 0
    /// Bytes delivered.
    public var bytes = 0
    /// Zero-length datagrams received and dropped.
    public var emptyDatagrams = 0
    /// Datagrams cut by the receive buffer (MSG_TRUNC): counted and marked damaged.
    public var truncatedDatagrams = 0
    /// Senders accepted (TCP listen) or connections made (TCP client).
    public var connections = 0
    /// Datagrams or connections refused by `--allow-from`.
    public var disallowed = 0
    /// Datagrams from another sender than the one the port listens to (``SenderLatch``): a
    /// flood or a stray sender, dropped before any parsing.
    public var otherSender = 0
    /// Times another sender took a UDP port over after 100 ms of silence, or the previous one
    /// took it back (``SenderLatch``).
    public var senderTakeovers = 0
    /// Datagrams on the RTCP port (RTP port + 1) that are not RTCP (RFC 3550 §6: version 2, packet
    /// type 192–223; RFC 5761 §4): dropped before the media path, counted as malformed RTCP.
    public var notRTCP = 0
    /// SRT's own statistics of the link (SRT sources only).
    public var srt: SRTStatistics?

    /// All counts zero.
    public init() {}
}

/// Errors opening or reading a source. The description is the one-line message a user sees.
public enum SourceError: Error, CustomStringConvertible, Equatable {
    case open(String)
    case read(String)
    public var description: String {
        switch self { case .open(let s): return s; case .read(let s): return s }
    }
}

/// A producer of stream bytes with arrival times: UDP, TCP, a file or stdin.
///
/// Every source is read from one thread, one call at a time.
public protocol ByteSource: AnyObject {
    /// The source as the user named it, for logs and the window title.
    var label: String { get }
    /// True when data arrives in real time (sockets, a replay, a capture played as recorded):
    /// never paced, and idle gaps end access units. False for files and stdin, which are paced.
    var deliversInRealTime: Bool { get }
    /// Counters so far.
    var counters: SourceCounters { get }
    /// Waits up to `timeoutMicros` for input and reads what is there into `buffer`.
    /// Throws ``SourceError/read(_:)`` on an error the source cannot continue from.
    func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent
    /// Releases the descriptor. Safe to call twice.
    func close()
    /// True while the source holds on purpose (a replay paused, or held on its last picture):
    /// its silence is not a sender gone quiet, so the decoder is not closed for it.
    var isHolding: Bool { get }
    /// True while a replay holds on its last picture: nothing follows until the user seeks or
    /// plays again (from a keyframe), so the pictures the decoder holds for reordering are shown.
    var isHeldAtEnd: Bool { get }
    /// True when each read is one datagram (UDP): RTP can be detected and depacketized.
    var deliversDatagrams: Bool { get }
    /// True when a gap in the input means the sender paused, so that an idle gap ends the
    /// picture in progress: every real-time source, and a pipe or socket another program writes
    /// live (stdin, a named FIFO), though those are paced like files. False for files.
    var idleGapsEndPictures: Bool { get }
    /// What one read is, for the summary and probe: "datagrams" (UDP), "packets" (an RTSP
    /// camera's RTP and RTCP over UDP or interleaved on TCP, a packet capture's), or "reads"
    /// (a byte stream: TCP, SRT, a pipe, a file).
    var countsAre: String { get }
    /// One log line saying what may be wrong when nothing at all has arrived for `silentMicros`
    /// µs since the source opened (a multicast group joined on another interface than the
    /// sender's), or nil when the source has nothing to say. The feed asks once.
    func silenceDiagnosis(silentMicros: UInt64) -> String?
    /// True when a sender that goes away is followed by the next one to connect to us (a TCP or
    /// SRT listener), false when we connect again ourselves or the input ends.
    var acceptsNextSender: Bool { get }
    /// While a source that connects by itself (an RTSP camera, a TCP or SRT caller) has not
    /// reached its sender: why the last attempt failed, one line ("Connection refused"); nil
    /// while connected, and always for sources that wait to be sent to.
    var connectionProblem: String? { get }
    /// The session the source's server described (an RTSP camera's SDP from DESCRIBE: codec,
    /// payload type, `sprop-*` parameter sets), or nil. It is read again at each `.connected`.
    var announcedSession: SessionDescription? { get }
    /// The way back to the sender: sends one compound RTCP packet where the sender takes RTCP
    /// (plain RTP: the address its RTCP comes from, RFC 3550 §11 / RFC 4961; an RTSP server:
    /// its `server_port` over UDP or interleaved channel 1 over TCP, RFC 2326 §10.12).
    /// - Returns: true when it went out; false where there is no way back (a byte stream, a
    ///   packet capture, a recording) or none yet (no RTCP from the sender so far).
    func sendToSender(_ packet: [UInt8]) -> Bool
}

extension ByteSource {
    public var isHolding: Bool { false }
    public var isHeldAtEnd: Bool { false }
    public var deliversDatagrams: Bool { false }
    public var idleGapsEndPictures: Bool { deliversInRealTime }
    public var countsAre: String { deliversDatagrams ? "datagrams" : "reads" }
    public func silenceDiagnosis(silentMicros: UInt64) -> String? { nil }
    public var acceptsNextSender: Bool { false }
    public var connectionProblem: String? { nil }
    public var announcedSession: SessionDescription? { nil }
    public func sendToSender(_ packet: [UInt8]) -> Bool { false }
}

/// Waits for a descriptor to become readable, with µs precision (`ppoll`).
/// - Returns: true when readable (or hung up), false on timeout or EINTR.
package func waitReadable(_ fd: Int32, timeoutMicros: Int) -> Bool {
    spy_wait_readable(fd, timeoutMicros) > 0
}

/// `strerror` as a Swift string.
package func errnoText(_ e: Int32 = errno) -> String { String(cString: strerror(e)) }
