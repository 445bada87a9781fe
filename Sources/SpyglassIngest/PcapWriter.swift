import CPcap

/// Writes datagrams as a classic packet capture (libpcap's `pcap_dump`, link type Ethernet):
/// each one as an IPv4/UDP packet from 127.0.0.1:`sourcePort` to 127.0.0.1:`port`, at its wall
/// time. `spyglass replay FILE --port PORT`, Wireshark and tcpdump read it.
public enum PcapWriter {
    /// Writes `datagrams` (bytes, µs since the epoch) to `path`.
    /// - Throws: ``SourceError/open(_:)`` when the file cannot be written.
    public static func write(_ datagrams: [(bytes: [UInt8], wallMicros: UInt64)], to path: String,
                             port: UInt16, sourcePort: UInt16 = 40_000) throws {
        guard let dead = pcap_open_dead(DLT_EN10MB, 65_535) else { throw SourceError.open("\(path): libpcap: no handle") }
        defer { pcap_close(dead) }
        guard let dumper = pcap_dump_open(dead, path) else { throw SourceError.open("\(path): \(String(cString: pcap_geterr(dead)))") }
        defer { pcap_dump_close(dumper) }
        var id: UInt16 = 0
        for d in datagrams {
            let payload = Array(d.bytes.prefix(65_535 - 28 - 14))
            var packet = ethernetIPv4UDP(payloadCount: payload.count, sourcePort: sourcePort, port: port, id: id) + payload
            id &+= 1
            var header = pcap_pkthdr()
            header.ts.tv_sec = Int(d.wallMicros / 1_000_000)
            header.ts.tv_usec = Int(d.wallMicros % 1_000_000)
            header.caplen = UInt32(packet.count)
            header.len = UInt32(packet.count)
            packet.withUnsafeMutableBytes { raw in
                pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header,
                          raw.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard pcap_dump_flush(dumper) == 0 else { throw SourceError.open("\(path): write failed") }
    }

    /// An Ethernet header, an IPv4 header (RFC 791, checksummed) and a UDP header (RFC 768,
    /// checksum 0: none) for a payload of `payloadCount` bytes, 127.0.0.1 to 127.0.0.1.
    static func ethernetIPv4UDP(payloadCount: Int, sourcePort: UInt16, port: UInt16, id: UInt16) -> [UInt8] {
        let udpLength = 8 + payloadCount, ipLength = 20 + udpLength
        var ip: [UInt8] = [0x45, 0, UInt8(ipLength >> 8), UInt8(ipLength & 0xFF), UInt8(id >> 8), UInt8(id & 0xFF), 0x40, 0,
                           64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]
        var sum: UInt32 = 0
        for i in stride(from: 0, to: 20, by: 2) { sum += UInt32(ip[i]) << 8 | UInt32(ip[i + 1]) }
        while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
        let checksum = ~UInt16(sum)
        ip[10] = UInt8(checksum >> 8)
        ip[11] = UInt8(checksum & 0xFF)
        let ethernet: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00]
        let udp: [UInt8] = [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xFF), UInt8(port >> 8), UInt8(port & 0xFF),
                            UInt8(udpLength >> 8), UInt8(udpLength & 0xFF), 0, 0]
        return ethernet + ip + udp
    }
}
