#if canImport(Glibc)
import Glibc
import SpyglassPipeline
#endif

/// Why a joined multicast group may deliver nothing, said in one line: the interface the group
/// was joined on, and the interfaces a sender could be on, with `?iface=NAME` to pick another.
///
/// Ground stations often have two network interfaces; a join without `?iface=` goes where the
/// kernel's routing table sends the group (RFC 1112 §7.1: one membership per interface), which
/// need not be where the camera is. What the kernel did is read from the kernel:
/// - memberships: `/proc/net/igmp` (IPv4) and `/proc/net/igmp6` (IPv6), one line per group per
///   interface;
/// - addresses: `getifaddrs(3)`;
/// - routes: `/proc/net/route` (a route into 224.0.0.0/4 is a multicast route).
public enum MulticastDiagnosis {
    /// One interface a sender could be on.
    public struct Interface: Equatable, Sendable {
        /// The interface name (`eth0`).
        public var name: String
        /// Its IPv4 addresses, dotted quad.
        public var ipv4: [String] = []
        /// True when a route into 224.0.0.0/4 (RFC 5771) goes out of it.
        public var multicastRoute = false
        /// False when the interface is down (`IFF_UP` clear).
        public var up = true
    }

    /// One row of `/proc/net/route`: destination and mask as network-order bytes.
    struct Route: Equatable {
        var interface: String
        var destination: [UInt8]
        var mask: [UInt8]
        /// Bits set in the mask.
        var prefixLength: Int { mask.reduce(0) { $0 + $1.nonzeroBitCount } }
        /// True when the route's destination lies in 224.0.0.0/4 (and it is not the default route).
        var isMulticast: Bool { prefixLength >= 4 && destination[0] & 0xF0 == 0xE0 }
        /// True when `address` (4 network-order bytes) matches destination under mask.
        func matches(_ address: [UInt8]) -> Bool {
            address.count == 4 && (0..<4).allSatisfy { address[$0] & mask[$0] == destination[$0] }
        }
    }

    /// The line for a group that has had no datagram for `silentSeconds`.
    /// - Parameters:
    ///   - label: the source's URL, for the start of the line.
    ///   - group: the group's address as written.
    ///   - port: the UDP port.
    ///   - asked: the `?iface=` given (a name or an address), or nil.
    ///   - joinedOn: the interfaces the kernel lists the group on (``joinedInterfaces(group:)``).
    ///   - chosenByRoute: without `?iface=`, the interface the routing table picks for the group.
    ///   - interfaces: the interfaces a sender could be on (``candidateInterfaces()``).
    ///   - silentSeconds: how long nothing came, s.
    public static func line(label: String, group: String, port: UInt16, asked: String?, joinedOn: [String],
                            chosenByRoute: String?, interfaces: [Interface], silentSeconds: Double) -> String {
        // Where the group is joined: the interface asked for (by name, or the one with that
        // address), else what the kernel lists, else what its routing table picks.
        let joinedNames: [String]
        let how: String
        if let asked {
            let name = interfaces.first { $0.ipv4.contains(asked) }?.name ?? asked
            joinedNames = [name]
            how = name == asked ? "" : " (?iface=\(asked))"
        } else if !joinedOn.isEmpty {
            joinedNames = joinedOn
            how = " (no ?iface=: the kernel chose by its routing table)"
        } else if let chosenByRoute {
            joinedNames = [chosenByRoute]
            how = " (no ?iface=: the kernel's route for the group)"
        } else {
            joinedNames = []
            how = "the interface the kernel chose (no ?iface=)"
        }
        let joined = joinedNames.joined(separator: ", ") + how
        let listed = interfaces.map { i -> String in
            var notes: [String] = []
            if i.multicastRoute { notes.append("multicast route") }
            if !i.up { notes.append("down") }
            return ([i.name] + i.ipv4).joined(separator: " ") + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
        }
        // The example names another interface that is up, preferring a real one to loopback.
        let others = interfaces.filter { !joinedNames.contains($0.name) && $0.up }
        let other = others.first { $0.name != "lo" } ?? others.first
        let host = group.contains(":") ? "[\(group)]" : group
        let example = other.map { " (e.g. udp://\(host):\(port)?iface=\($0.name))" } ?? ""
        return "\(label): no datagram in \(Int(silentSeconds.rounded())) s from multicast group \(group), joined on \(joined); "
            + "interfaces with an IPv4 address or a multicast route: \(listed.isEmpty ? "none" : listed.joined(separator: ", ")); "
            + "if the sender is on another one, join there with ?iface=NAME\(example)"
    }

    // MARK: - what the kernel says

    /// The interfaces the kernel lists `group` on (`/proc/net/igmp` or `/proc/net/igmp6`).
    public static func joinedInterfaces(group: [UInt8]) -> [String] {
        if group.count == 4 { return parseIGMP(readProc("/proc/net/igmp"), group: group) }
        return parseIGMP6(readProc("/proc/net/igmp6"), group: group)
    }

    /// Interfaces with an IPv4 address (`getifaddrs(3)`) or a multicast route (`/proc/net/route`),
    /// in the order the kernel lists them.
    public static func candidateInterfaces() -> [Interface] {
        var out: [Interface] = []
        func index(_ name: String) -> Int {
            if let i = out.firstIndex(where: { $0.name == name }) { return i }
            out.append(Interface(name: name))
            return out.count - 1
        }
        var list: UnsafeMutablePointer<ifaddrs>?
        var flags: [String: UInt32] = [:]
        if getifaddrs(&list) == 0, let first = list {
            defer { freeifaddrs(first) }
            var p: UnsafeMutablePointer<ifaddrs>? = first
            while let a = p {
                let name = String(cString: a.pointee.ifa_name)
                flags[name] = a.pointee.ifa_flags
                if let sa = a.pointee.ifa_addr, Int32(sa.pointee.sa_family) == AF_INET {
                    let text = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin -> String in
                        var addr = sin.pointee.sin_addr
                        var buf = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                        inet_ntop(AF_INET, &addr, &buf, socklen_t(buf.count))
                        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                    }
                    out[index(name)].ipv4.append(text)
                }
                p = a.pointee.ifa_next
            }
        }
        for r in parseRoutes(readProc("/proc/net/route")) where r.isMulticast { out[index(r.interface)].multicastRoute = true }
        for i in out.indices { if let f = flags[out[i].name] { out[i].up = f & UInt32(IFF_UP) != 0 } }
        return out
    }

    /// The interface the routing table picks for an IPv4 `group` (longest prefix; a multicast
    /// route, else the default route), as a join without an interface does.
    public static func routeInterface(group: [UInt8]) -> String? {
        parseRoutes(readProc("/proc/net/route")).filter { $0.matches(group) }.max { $0.prefixLength < $1.prefixLength }?.interface
    }

    // MARK: - parsing (pure)

    /// The devices `/proc/net/igmp` lists `group` (4 network-order bytes) under. The file has a
    /// device line ("1\tlo        :     1      V3") followed by one indented line per group, whose
    /// first field is the group as the kernel's `%08X` of the network-order word.
    static func parseIGMP(_ text: String, group: [UInt8]) -> [String] {
        var device: String?
        var out: [String] = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = fields.first else { continue }
            if line.first != " " && line.first != "\t" {
                device = fields.count > 1 ? String(fields[1]).trimmingSuffix(":") : nil
            } else if let device, let word = UInt32(first, radix: 16), withUnsafeBytes(of: word, Array.init) == group {
                if !out.contains(device) { out.append(device) }
            }
        }
        return out
    }

    /// The devices `/proc/net/igmp6` lists `group` (16 network-order bytes) under: one line per
    /// group and device, "idx device 32-hex-digit-group users flags timer".
    static func parseIGMP6(_ text: String, group: [UInt8]) -> [String] {
        let hex = group.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        var out: [String] = []
        for line in text.split(separator: "\n") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if f.count >= 3, f[2].lowercased() == hex, !out.contains(String(f[1])) { out.append(String(f[1])) }
        }
        return out
    }

    /// The rows of `/proc/net/route` (a header line, then "Iface Destination Gateway Flags RefCnt
    /// Use Metric Mask …", destination and mask as the `%08X` of network-order words).
    static func parseRoutes(_ text: String) -> [Route] {
        text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 8, let d = UInt32(f[1], radix: 16), let m = UInt32(f[7], radix: 16) else { return nil }
            return Route(interface: String(f[0]), destination: withUnsafeBytes(of: d, Array.init),
                         mask: withUnsafeBytes(of: m, Array.init))
        }
    }

    private static func readProc(_ path: String) -> String {
        // /proc files report size 0: read until the end.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += buf[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
