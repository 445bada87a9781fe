#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassTransport

/// The RTCP socket of an RTP session over UDP (RFC 3550 §11: the RTP port + 1): receives the
/// sender's compound packets and carries what the stream's `RTCPSession` has for the sender.
/// It parses nothing: the session, in the depacketizer, reads every packet once.
///
/// Packets go to `destination` when it is known (an RTSP server's `server_port`), else to the
/// address the sender's RTCP comes from (symmetric RTP, RFC 4961), and before any came, to the
/// RTP sender's port + 1 (RFC 3550 §11).
/// Used on the feed's thread only, by the source that owns the RTP socket.
package final class RTCPPort {
    /// The bound RTCP socket.
    let fd: Int32
    private var destination: [UInt8]?
    private let destinationGiven: Bool
    private let allowFrom: [AddressPrefix]

    /// - Parameters:
    ///   - fd: a bound UDP socket, owned (closed) by this port from now on.
    ///   - destination: the sender's RTCP address as sockaddr bytes, when known in advance.
    ///   - allowFrom: senders whose RTCP is taken (`--allow-from`; empty = all); others' is dropped.
    init(fd: Int32, destination: [UInt8]? = nil, allowFrom: [AddressPrefix] = []) {
        self.fd = fd
        self.destination = destination
        destinationGiven = destination != nil
        self.allowFrom = allowFrom
    }

    deinit { Glibc.close(fd) }

    /// Reads one datagram (without waiting) into `buffer`, learning where reports go.
    /// - Parameter rtpSender: the RTP sender the media port listens to, when known: RTCP from
    ///   another host is dropped (counted as another sender's), so that a stranger can neither
    ///   set the capture clock with forged sender reports nor take the receiver reports.
    /// - Returns: the byte count, or nil when nothing was there (or it was empty, or from a
    ///   sender `--allow-from` refuses, or from another host than the RTP sender's).
    func receive(into buffer: UnsafeMutableRawBufferPointer, rtpSender: UDPPeer? = nil) -> Int? {
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &peer) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
            }
        }
        guard n > 0 else { return nil }
        if !allowFrom.isEmpty {
            let address = withUnsafePointer(to: &peer) { AddressPrefix.addressBytes(UnsafeRawPointer($0)) }
            guard allowFrom.contains(where: { $0.contains(address) }) else { return nil }
        }
        if let rtpSender, !withUnsafePointer(to: &peer, { UDPPeer(UnsafeRawPointer($0)) }).isSameHost(as: rtpSender) {
            otherHost += 1
            return nil
        }
        // Only RTCP goes on: an RTP packet (or anything else) sent here must not reach the media
        // path, nor steer where the receiver reports go.
        let packet = UnsafeRawBufferPointer(rebasing: buffer[..<n])
        guard RTCPPacket.looksLikeRTCP(packet) else { notRTCP += 1; return nil }
        // Only a well-formed sender report says where the sender is: any RTCP-looking datagram
        // (a malformed one, a stray receiver report) used to take the replies and the keyframe
        // requests away from the sender.
        if !destinationGiven, (try? RTCPPacket.senderReports(in: packet))?.isEmpty == false {
            destination = withUnsafeBytes(of: &peer) { Array($0.prefix(Int(length))) }
        }
        return n
    }

    /// Datagrams that came to this port and were not RTCP, dropped.
    private(set) var notRTCP = 0
    /// Datagrams from another host than the RTP sender's, dropped.
    private(set) var otherHost = 0

    /// Sends one compound packet to the sender's RTCP address.
    /// - Parameter rtpSender: the RTP sender, whose port + 1 is used until the sender's RTCP
    ///   shows where it is.
    /// - Returns: true when it went out; false when no address is known, or when the send
    ///   failed (a full buffer, an unreachable port: the next report tries again).
    func send(_ packet: [UInt8], rtpSender: UDPPeer? = nil) -> Bool {
        guard let destination = destination ?? rtpSender?.nextPortAddress() else { return false }
        let sent = destination.withUnsafeBytes { d in
            packet.withUnsafeBytes {
                sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT),
                       d.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(d.count))
            }
        }
        return sent == packet.count
    }
}
