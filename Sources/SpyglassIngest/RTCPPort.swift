#if canImport(Glibc)
import Glibc
#endif
import CSystem
import SpyglassTransport

/// The RTCP half of an RTP session over UDP (RFC 3550 §11: the RTP port + 1): receives the
/// sender's compound packets and sends it receiver reports (``ReceiverReporter``) every 2 s.
///
/// Reports go to `destination` when it is known (an RTSP server's `server_port`), else to the
/// address the sender's RTCP comes from; none are sent before either is known. Used on the
/// feed's thread only, by the source that owns the RTP socket.
package final class RTCPPort {
    /// The bound RTCP socket.
    let fd: Int32
    private var reporter = ReceiverReporter()
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

    /// Reads one datagram (without waiting) into `buffer`, learning where reports go and the
    /// sender reports' LSR.
    /// - Returns: the byte count, or nil when nothing was there (or it was empty, or from a
    ///   sender `--allow-from` refuses).
    func receive(into buffer: UnsafeMutableRawBufferPointer, arrivalMicros: UInt64) -> Int? {
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
        // Only RTCP goes on: an RTP packet (or anything else) sent here must not reach the media
        // path, nor steer where the receiver reports go.
        guard Self.looksLikeRTCP(UnsafeRawBufferPointer(rebasing: buffer[..<n])) else { notRTCP += 1; return nil }
        if !destinationGiven {
            destination = withUnsafeBytes(of: &peer) { Array($0.prefix(Int(length))) }
        }
        observeRTCP(UnsafeRawBufferPointer(rebasing: buffer[..<n]), arrivalMicros: arrivalMicros)
        return n
    }

    /// Datagrams that came to this port and were not RTCP, dropped.
    private(set) var notRTCP = 0

    /// Version 2 and a packet type of 192–223 (RFC 5761 §4: where RTCP's types lie; RTP's are below).
    static func looksLikeRTCP(_ p: UnsafeRawBufferPointer) -> Bool {
        p.count >= 8 && p[0] >> 6 == 2 && (192...223).contains(p[1])
    }

    /// Notes the sender reports of a compound packet (malformed ones are the depacketizer's to count).
    func observeRTCP(_ packet: UnsafeRawBufferPointer, arrivalMicros: UInt64) {
        for sr in (try? RTCPPacket.senderReports(in: packet)) ?? [] {
            reporter.observe(sr, arrivalMicros: arrivalMicros)
        }
    }

    /// Notes one RTP packet delivered, for the reception statistics.
    func observeRTP(_ packet: UnsafeRawBufferPointer, arrivalMicros: UInt64) {
        reporter.observeRTP(packet, arrivalMicros: arrivalMicros)
    }

    /// Sends a receiver report when one is due and the destination is known.
    func sendReportIfDue(nowMicros: UInt64) {
        guard let destination, let report = reporter.reportIfDue(nowMicros: nowMicros) else { return }
        // A report that cannot go out now (a full buffer, an unreachable port) waits for the next.
        _ = destination.withUnsafeBytes { d in
            report.withUnsafeBytes {
                sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT),
                       d.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(d.count))
            }
        }
    }
}
