import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// A multicast group that delivers nothing: once per feed the log says which interface the group
/// was joined on and which interfaces a sender could be on, with `?iface=NAME`.
@Suite struct MulticastSilenceTests {
    /// A group of its own per call (239/8 is administratively scoped, RFC 2365; TTL 1 on `lo`
    /// leaves nothing on the network).
    static func group() -> String { "239.77.\(getpid() % 250 + 1).\(Int.random(in: 1...250))" }

    /// The built binary joins a group on `lo` that nobody sends to: its stderr has the line,
    /// exactly once, naming `lo` and the `?iface=` way to another interface.
    @Test func aSilentGroupIsExplainedOnceByTheBinary() throws {
        let port = try Sender.freeUDPPort()
        let url = "udp://\(Self.group()):\(port)?iface=lo"
        // --timeout 4: the feed ends by itself; the line comes at 3 s of silence, or at that stop.
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", url, "--display", "none", "--timeout", "4"],
                                            timeoutSeconds: 60)
        #expect(rc == 0, "\(err)")
        let lines = err.split(separator: "\n").filter { $0.contains("no datagram in") }
        #expect(lines.count == 1, "one line per feed:\n\(err)")
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("spyglass: \(url): no datagram in"))
        #expect(line.contains("joined on lo"))
        #expect(line.contains("lo 127.0.0.1"), "the interfaces with an IPv4 address are listed")
        #expect(line.contains("?iface=NAME"))
    }

    /// In-process: the source explains a silent group, and has nothing to say once a datagram
    /// came (the join worked), nor for unicast.
    @Test func theSourceSaysNothingOnceADatagramCame() throws {
        let group = Self.group()
        let port = try Sender.freeUDPPort()
        let source = try UDPSource(host: group, port: port, multicastInterface: "127.0.0.1")
        defer { source.close() }
        let line = try #require(source.silenceDiagnosis(silentMicros: 3_000_000))
        #expect(line.contains("no datagram in 3 s from multicast group \(group), joined on lo (?iface=127.0.0.1)"))
        let sender = try StreamSender(destination: .udp(host: group, port: port, interface: "127.0.0.1"))
        sender.send([0, 0, 0, 1, 0x09, 0xF0])
        var buffer = [UInt8](repeating: 0, count: 2048)
        var event = SourceEvent.timeout
        // Wait for the datagram itself, with a generous deadline.
        let deadline = MonotonicClock.nowMicros() + 10_000_000
        while case .timeout = event, MonotonicClock.nowMicros() < deadline {
            event = try buffer.withUnsafeMutableBytes { try source.read(into: $0, timeoutMicros: 100_000) }
        }
        #expect(event != .timeout, "the datagram came")
        #expect(source.silenceDiagnosis(silentMicros: 3_000_000) == nil)
        let unicast = try UDPSource(host: "127.0.0.1", port: 0)
        defer { unicast.close() }
        #expect(unicast.silenceDiagnosis(silentMicros: 3_000_000) == nil)
    }

    // MARK: - what the kernel's tables say, parsed

    @Test func igmpMembershipsAreReadPerDevice() {
        let igmp = """
        Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter
        1\tlo        :     2      V3
        \t\t\t\t010000E0     1 0:00000000\t\t0
        \t\t\t\t01004DEF     1 0:00000000\t\t0
        4\teth0      :     1      V3
        \t\t\t\t010000E0     1 0:00000000\t\t0
        5\tverylongname0:     1      V3
        \t\t\t\t01004DEF     1 0:00000000\t\t0
        """
        // 239.77.0.1 and 224.0.0.1 as the kernel prints them (%08X of the network-order word, little-endian host).
        #expect(MulticastDiagnosis.parseIGMP(igmp, group: [239, 77, 0, 1]) == ["lo", "verylongname0"])
        #expect(MulticastDiagnosis.parseIGMP(igmp, group: [224, 0, 0, 1]) == ["lo", "eth0"])
        #expect(MulticastDiagnosis.parseIGMP(igmp, group: [239, 1, 2, 3]).isEmpty)
        let igmp6 = "1    lo              ff150000000000000000000000000077     1 00000004 0\n"
        var g6 = [UInt8](repeating: 0, count: 16); g6[0] = 0xFF; g6[1] = 0x15; g6[15] = 0x77
        #expect(MulticastDiagnosis.parseIGMP6(igmp6, group: g6) == ["lo"])
    }

    @Test func routesIntoTheMulticastRangeAreMulticastRoutes() {
        let route = """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
        eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
        eth1\t000000E0\t00000000\t0001\t0\t0\t0\t000000F0\t0\t0\t0
        """
        let r = MulticastDiagnosis.parseRoutes(route)
        #expect(r.map(\.interface) == ["eth0", "eth0", "eth1"])
        #expect(r.map(\.isMulticast) == [false, false, true])
        #expect(r[1].destination == [192, 0, 2, 0] && r[1].prefixLength == 24)
        #expect(r.filter { $0.matches([239, 1, 2, 3]) }.max { $0.prefixLength < $1.prefixLength }?.interface == "eth1")
    }

    /// A ground station with two interfaces: the kernel joined on eth0 (its default route), the
    /// camera is on eth1. The line names both and points to eth1.
    @Test func theLineNamesTheJoinAndTheOtherInterface() {
        let line = MulticastDiagnosis.line(
            label: "udp://239.1.2.3:5600", group: "239.1.2.3", port: 5600, asked: nil, joinedOn: ["eth0"], chosenByRoute: "eth0",
            interfaces: [.init(name: "lo", ipv4: ["127.0.0.1"]), .init(name: "eth0", ipv4: ["192.168.1.10"]),
                         .init(name: "eth1", ipv4: ["10.5.0.2"], multicastRoute: true), .init(name: "wlan0", ipv4: ["10.9.0.4"], up: false)],
            silentSeconds: 3)
        #expect(line == "udp://239.1.2.3:5600: no datagram in 3 s from multicast group 239.1.2.3, joined on eth0 (no ?iface=: the kernel chose by its routing table); "
                + "interfaces with an IPv4 address or a multicast route: lo 127.0.0.1, eth0 192.168.1.10, eth1 10.5.0.2 (multicast route), wlan0 10.9.0.4 (down); "
                + "if the sender is on another one, join there with ?iface=NAME (e.g. udp://239.1.2.3:5600?iface=eth1)")
    }
}
