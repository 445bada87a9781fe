import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassSession

/// `spyglass send pattern udp://A udp://B`: one stream to two receivers, as `tools/peer-latency`
/// feeds its players.
@Suite struct SeveralDestinationsTests {
    /// Every datagram to each: the two sockets get the same datagrams in the same order, and
    /// the closing line counts both copies.
    @Test func eachDestinationGetsEveryDatagram() throws {
        let a = try DatagramSink(), b = try DatagramSink()
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(a.port)", "udp://127.0.0.1:\(b.port)",
                                                                     "--size", "320x240", "--duration", "1"])
        try #require(rc == 0, "\(err)")
        let sent = try #require(err.split(separator: "\n").first { $0.contains("datagrams") }.flatMap { line in
            line.split(separator: " ").firstIndex(of: "datagrams,").map { Int(line.split(separator: " ")[$0 - 1]) } ?? nil
        }, "the closing line counts datagrams: \(err)")
        let fromA = a.drain(), fromB = b.drain()
        #expect(fromA.count > 30 && fromA == fromB, "\(fromA.count) and \(fromB.count) datagrams")
        #expect(sent == fromA.count + fromB.count, "the closing line's \(sent) datagrams are both copies")
        #expect(err.contains("to udp://127.0.0.1:\(a.port) and udp://127.0.0.1:\(b.port)"), "\(err)")
    }

    /// Only datagrams can be copied: a TCP second destination is a one-line error, before
    /// anything is sent.
    @Test func aSecondDestinationMustBeUDP() throws {
        let a = try DatagramSink()
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(a.port)", "tcp://127.0.0.1:9",
                                                                     "--duration", "1"])
        #expect(rc == 1 && err.contains("several destinations must all be udp://") && err.split(separator: "\n").count == 1, "\(err)")
        #expect(a.drain().isEmpty)
    }

    /// One receiver named twice would get every datagram twice: a one-line error instead.
    @Test func aDestinationGivenTwiceIsRefused() throws {
        let a = try DatagramSink()
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", "pattern", "udp://127.0.0.1:\(a.port)", "udp://127.0.0.1:\(a.port)",
                                                                     "--duration", "1"])
        #expect(rc == 1 && err.contains("given twice") && err.split(separator: "\n").count == 1, "\(err)")
        #expect(a.drain().isEmpty)
    }
}

/// A UDP socket on 127.0.0.1 with a large receive buffer that keeps what came.
private final class DatagramSink {
    let fd: Int32
    let port: UInt16

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var size: Int32 = 8 << 20
        setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0 }
        }
        fd = s
        port = UInt16(bigEndian: addr.sin_port)
        try #require(bound, "a UDP port on 127.0.0.1")
    }

    /// Every datagram waiting, in order (the sender has exited: nothing more comes).
    func drain() -> [[UInt8]] {
        var out: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0 { return out }
            out.append(Array(buffer[..<n]))
        }
    }

    deinit { close(fd) }
}
