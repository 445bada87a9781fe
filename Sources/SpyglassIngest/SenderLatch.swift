#if canImport(Glibc)
import Glibc
#endif

/// Which sender a UDP port listens to: the first one heard, for as long as it keeps sending.
///
/// A video stream comes from one transport address (one socket of one encoder, RFC 3550 §8.2:
/// a sender that restarts comes back with a new one). Datagrams from any other address or port
/// while the established sender still sends cannot be the stream: a flood, a stray sender, a
/// misdirected feed. They are refused before any parsing (one comparison per datagram) and
/// counted, so that another sender's datagrams cost the feed almost nothing and never reach
/// its depacketizer, its framing detector or its decoder.
///
/// The established sender gives the port up once it has been silent for
/// ``takeoverSilenceMicros`` (100 ms, the silence after which ``SSRCProbation`` lets a new RTP
/// sender take over): the next sender then takes over at its first datagram (a restarted
/// encoder, a relay on another port). The sender it took over from gets the port back at its
/// next datagram: a sender that stalled for 100 ms under load is not locked out by a flood
/// that took its silence (a restarted encoder's old socket never sends again).
///
/// Known limit: a flood that starts before the stream and never pauses for 100 ms holds the
/// port; `--allow-from` is the answer there.
package struct SenderLatch<Sender: Equatable> {
    /// How long the established sender must have been silent before another takes over, µs.
    static var takeoverSilenceMicros: UInt64 { 100_000 }

    private var established: Sender?
    /// The sender the port was taken over from: it gets the port back at its next datagram.
    private var previous: Sender?
    private var lastMicros: UInt64 = 0
    /// Datagrams refused because they came from another sender than the established one.
    private(set) var refused = 0
    /// Times another sender took the port over, or the previous one took it back (the first
    /// sender is not counted).
    private(set) var takeovers = 0

    /// The sender the port listens to now (nil before the first datagram).
    var current: Sender? { established }

    /// Decides on one datagram from `sender`, arrived at `nowMicros` (monotonic µs).
    /// - Returns: true when it is the established sender's (or a new sender takes over with it).
    mutating func admit(_ sender: Sender, nowMicros: UInt64) -> Bool {
        if let current = established, current != sender {
            let takesBack = sender == previous
            guard takesBack || nowMicros >= lastMicros + Self.takeoverSilenceMicros else {
                refused += 1
                return false
            }
            // Only a sender that fell silent can take the port back, never the one that took it.
            previous = takesBack ? nil : current
            takeovers += 1
        }
        established = sender
        lastMicros = nowMicros
        return true
    }
}

/// A datagram's source transport address (IPv4 or IPv6 address and port), read without
/// allocating: what ``SenderLatch`` compares.
package struct UDPPeer: Equatable {
    var family: sa_family_t = 0
    var port: UInt16 = 0
    var high: UInt64 = 0
    var low: UInt64 = 0

    /// True when `other` is the same host (family and address; the port may differ, as an RTP
    /// sender's RTCP comes from its own port).
    func isSameHost(as other: UDPPeer) -> Bool { family == other.family && high == other.high && low == other.low }

    /// The same host at the next port, as `sockaddr_in`/`sockaddr_in6` bytes: where an RTP
    /// sender's RTCP is by convention (RFC 3550 §11) before its own RTCP says otherwise. Nil for
    /// other families and for port 65535.
    func nextPortAddress() -> [UInt8]? {
        let host = UInt16(bigEndian: port)
        guard host < UInt16.max else { return nil }
        if Int32(family) == AF_INET {
            var sin = sockaddr_in()
            sin.sin_family = family
            sin.sin_port = (host + 1).bigEndian
            sin.sin_addr.s_addr = UInt32(truncatingIfNeeded: low)
            return withUnsafeBytes(of: &sin) { Array($0) }
        }
        if Int32(family) == AF_INET6 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = family
            sin6.sin6_port = (host + 1).bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { b in
                b.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
                b.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            return withUnsafeBytes(of: &sin6) { Array($0) }
        }
        return nil
    }

    /// The address a `recvfrom` filled in (`sockaddr_in` or `sockaddr_in6`); unknown families
    /// compare by family alone.
    init(_ storage: UnsafeRawPointer) {
        family = storage.assumingMemoryBound(to: sockaddr.self).pointee.sa_family
        if Int32(family) == AF_INET {
            let sin = storage.assumingMemoryBound(to: sockaddr_in.self).pointee
            port = sin.sin_port
            low = UInt64(sin.sin_addr.s_addr)
        } else if Int32(family) == AF_INET6 {
            let sin6 = storage.assumingMemoryBound(to: sockaddr_in6.self).pointee
            port = sin6.sin6_port
            (high, low) = withUnsafeBytes(of: sin6.sin6_addr) { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
        }
    }
}
