import Foundation
import CPcap
#if canImport(Glibc)
import Glibc
import SpyglassPipeline
#endif

/// UDP payloads from a packet capture (pcap or pcapng, read with libpcap), replayed with the
/// original inter-packet timing as a datagram source: raw Annex B or RTP, detected as for a
/// live socket.
///
/// Link types: Ethernet (with VLAN tags), Linux cooked (SLL, SLL2), BSD loopback, raw IP.
/// IPv4 fragments are reassembled (at most 64 datagrams in progress); IPv6 UDP is read when
/// not fragmented. Non-UDP traffic, other flows, truncated (snaplen) packets and fragments that
/// never complete are counted, never passed on.
public final class PcapSource: ByteSource {
    /// A UDP flow in the capture.
    public struct Flow: Hashable, Sendable, CustomStringConvertible {
        public var source: String
        public var destination: String
        public var destinationPort: UInt16
        public var description: String { "\(source) → \(destination):\(destinationPort)" }
    }

    /// What the capture held besides the chosen flow.
    public struct Counts: Sendable {
        public var packets = 0
        public var nonUDP = 0
        public var otherFlows = 0
        public var truncated = 0
        public var fragmentsReassembled = 0
        public var fragmentsDropped = 0
    }

    public let label: String
    public let deliversInRealTime = true
    public var deliversDatagrams: Bool { true }
    public var countsAre: String { "packets" }
    public private(set) var counters = SourceCounters()
    public private(set) var counts = Counts()
    /// Every UDP flow seen, with its datagram count.
    public private(set) var flows: [Flow: Int] = [:]
    private var datagrams: [(time: UInt64, flow: Flow, payload: [UInt8])] = []
    private var position = 0
    private var startMicros: UInt64 = 0
    private let speed: Double
    private var chosen: Flow?

    /// Errors specific to captures.
    public enum PcapError: Error, CustomStringConvertible {
        case open(String)
        case ambiguous([String])
        case noFlow(String)
        public var description: String {
            switch self {
            case .open(let s): return s
            case .ambiguous(let flows): return "several UDP flows; pick one with --port (and --host):\n  " + flows.joined(separator: "\n  ")
            case .noFlow(let s): return s
            }
        }
    }

    /// Reads the whole capture and picks the flow.
    /// - Parameters:
    ///   - port: destination UDP port of the flow (nil: the only flow, or the busiest video-like one).
    ///   - host: destination (or source) address of the flow.
    ///   - speed: replay speed (0 = as fast as possible).
    /// - Throws: ``PcapError`` for an unreadable file, no UDP flow, or an ambiguous choice.
    public init(path: String, port: UInt16? = nil, host: String? = nil, speed: Double = 1) throws {
        label = path
        self.speed = speed
        var err = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
        guard let pcap = pcap_open_offline(path, &err) else {
            throw PcapError.open("\(path): \(String(decoding: err.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        defer { pcap_close(pcap) }
        let link = pcap_datalink(pcap)
        var fragments = FragmentTable()
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        while true {
            let rc = pcap_next_ex(pcap, &header, &data)
            if rc == -2 { break }          // end of file
            if rc == -1 {
                if datagrams.isEmpty { throw PcapError.open("\(path): \(String(cString: pcap_geterr(pcap)))") }
                counts.truncated += 1       // a damaged tail: keep what was read
                break
            }
            guard rc == 1, let h = header, let d = data else { continue }
            counts.packets += 1
            if h.pointee.caplen < h.pointee.len { counts.truncated += 1; continue }
            let bytes = UnsafeBufferPointer(start: d, count: Int(h.pointee.caplen))
            // Capture clocks step and files get merged: clamp, never trap.
            let sec = UInt64(clamping: max(0, Int64(h.pointee.ts.tv_sec)))
            let (scaled, overflow) = min(sec, 1 << 40).multipliedReportingOverflow(by: 1_000_000)
            let time = overflow ? UInt64(1) << 60 : scaled + UInt64(clamping: max(0, Int64(h.pointee.ts.tv_usec)))
            guard let ip = Self.ipPayload(bytes, link: link) else { counts.nonUDP += 1; continue }
            guard let udp = Self.udp(ip, fragments: &fragments, counts: &counts) else { continue }
            flows[udp.flow, default: 0] += 1
            datagrams.append((time, udp.flow, udp.payload))
        }
        counts.fragmentsDropped += fragments.pending + fragments.dropped
        // Choose the flow.
        var candidates = Array(flows.keys)
        if let port { candidates = candidates.filter { $0.destinationPort == port } }
        if let host { candidates = candidates.filter { $0.destination == host || $0.source == host } }
        guard !candidates.isEmpty else {
            throw PcapError.noFlow(flows.isEmpty ? "\(path): no UDP traffic in the capture"
                                   : "\(path): no UDP flow matches; flows: " + flows.keys.map(\.description).sorted().joined(separator: ", "))
        }
        if candidates.count > 1 {
            let sorted = candidates.sorted { flows[$0]! > flows[$1]! }
            throw PcapError.ambiguous(sorted.map { "\($0) (\(flows[$0]!) datagrams)" })
        }
        chosen = candidates[0]
        counts.otherFlows = datagrams.filter { $0.flow != candidates[0] }.count
        datagrams.removeAll { $0.flow != candidates[0] }
    }

    /// The flow being replayed.
    public var flow: Flow? { chosen }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeoutMicros: Int) throws -> SourceEvent {
        guard position < datagrams.count else { return .end }
        let d = datagrams[position]
        if startMicros == 0 { startMicros = MonotonicClock.nowMicros() }
        if speed > 0 {
            // Time relative to the first datagram; a packet stamped earlier plays at once.
            let offset = d.time > datagrams[0].time ? d.time - datagrams[0].time : 0
            let due = startMicros + UInt64(min(Double(offset) / speed, 1e15))
            let now = MonotonicClock.nowMicros()
            if due > now {
                MonotonicClock.sleep(untilMicros: min(due, now + UInt64(timeoutMicros)))
                if MonotonicClock.nowMicros() < due { return .timeout }
            }
        }
        position += 1
        if d.payload.isEmpty { counters.emptyDatagrams += 1; return .emptyDatagram }
        let n = buffer.copyPrefix(of: d.payload)
        counters.datagrams += 1
        counters.bytes += n
        return .data(count: n, arrivalMicros: MonotonicClock.nowMicros(), truncated: n < d.payload.count)
    }

    /// The datagrams of the chosen flow with their capture times (µs), for `--send`.
    public var schedule: [(time: UInt64, payload: [UInt8])] { datagrams.map { ($0.time, $0.payload) } }

    public func close() {}

    // MARK: - parsing

    /// The IP packet inside a link-layer frame.
    static func ipPayload(_ b: UnsafeBufferPointer<UInt8>, link: Int32) -> ArraySlice<UInt8>? {
        var off: Int
        switch link {
        case DLT_EN10MB:
            guard b.count >= 14 else { return nil }
            off = 12
            var type = Int(b[off]) << 8 | Int(b[off + 1])
            while type == 0x8100 || type == 0x88A8 {   // VLAN tags
                off += 4
                guard b.count >= off + 2 else { return nil }
                type = Int(b[off]) << 8 | Int(b[off + 1])
            }
            guard type == 0x0800 || type == 0x86DD else { return nil }
            off += 2
        case DLT_LINUX_SLL: off = 16
        case 276: off = 20                               // DLT_LINUX_SLL2
        case DLT_NULL, DLT_LOOP: off = 4
        case DLT_RAW, 228, 229: off = 0                  // raw IP, IPv4, IPv6
        default: return nil
        }
        guard b.count > off else { return nil }
        return Array(b)[off...]
    }

    /// The UDP datagram in an IP packet (reassembling IPv4 fragments).
    static func udp(_ ip: ArraySlice<UInt8>, fragments: inout FragmentTable, counts: inout Counts)
        -> (flow: Flow, payload: [UInt8])? {
        guard let v = ip.first.map({ $0 >> 4 }) else { return nil }
        let s = ip.startIndex
        if v == 4 {
            guard ip.count >= 20 else { counts.nonUDP += 1; return nil }
            let ihl = Int(ip[s] & 0x0F) * 4
            let total = Int(ip[s + 2]) << 8 | Int(ip[s + 3])
            guard ihl >= 20, total >= ihl, ip.count >= total else { counts.truncated += 1; return nil }
            guard ip[s + 9] == 17 else { counts.nonUDP += 1; return nil }
            let src = "\(ip[s + 12]).\(ip[s + 13]).\(ip[s + 14]).\(ip[s + 15])"
            let dst = "\(ip[s + 16]).\(ip[s + 17]).\(ip[s + 18]).\(ip[s + 19])"
            let flags = Int(ip[s + 6]) >> 5, fragOffset = (Int(ip[s + 6] & 0x1F) << 8 | Int(ip[s + 7])) * 8
            var l4 = Array(ip[(s + ihl)..<(s + total)])
            if flags & 1 == 1 || fragOffset > 0 {
                let key = "\(src)>\(dst)#\(Int(ip[s + 4]) << 8 | Int(ip[s + 5]))"
                guard let whole = fragments.add(key: key, offset: fragOffset, more: flags & 1 == 1, data: l4) else { return nil }
                counts.fragmentsReassembled += 1
                l4 = whole
            }
            return udpBody(l4, src: src, dst: dst, counts: &counts)
        }
        if v == 6 {
            guard ip.count >= 40, ip[s + 6] == 17 else { counts.nonUDP += 1; return nil }
            func addr(_ at: Int) -> String {
                stride(from: at, to: at + 16, by: 2).map { String(Int(ip[$0]) << 8 | Int(ip[$0 + 1]), radix: 16) }.joined(separator: ":")
            }
            return udpBody(Array(ip[(s + 40)...]), src: addr(s + 8), dst: addr(s + 24), counts: &counts)
        }
        counts.nonUDP += 1
        return nil
    }

    private static func udpBody(_ l4: [UInt8], src: String, dst: String, counts: inout Counts) -> (flow: Flow, payload: [UInt8])? {
        guard l4.count >= 8 else { counts.truncated += 1; return nil }
        let port = UInt16(l4[2]) << 8 | UInt16(l4[3])
        let length = Int(l4[4]) << 8 | Int(l4[5])
        guard length >= 8, length <= l4.count else { counts.truncated += 1; return nil }
        return (Flow(source: src, destination: dst, destinationPort: port), Array(l4[8..<length]))
    }

    /// IPv4 fragments waiting for the rest of their datagram (RFC 791), bounded: at most 64
    /// datagrams in progress, 64 fragments and 64 KiB each (a UDP datagram is at most 64 KiB).
    struct FragmentTable {
        private var parts: [String: [(offset: Int, data: [UInt8], last: Bool)]] = [:]
        private var order: [String] = []
        var pending: Int { parts.count }
        /// Datagrams given up: evicted, or over the fragment or size cap.
        private(set) var dropped = 0

        mutating func add(key: String, offset: Int, more: Bool, data: [UInt8]) -> [UInt8]? {
            if parts[key] == nil {
                order.append(key)
                if order.count > 64 { parts[order.removeFirst()] = nil; dropped += 1 }
            }
            let list0 = parts[key, default: []]
            if list0.count >= 64 || offset + data.count > 65_535 {
                parts[key] = nil
                order.removeAll { $0 == key }
                dropped += 1
                return nil
            }
            parts[key, default: []].append((offset, data, !more))
            let list = parts[key]!.sorted { $0.offset < $1.offset }
            guard list.contains(where: { $0.last }) else { return nil }
            var whole: [UInt8] = []
            for p in list {
                guard p.offset == whole.count else { return nil }   // a hole: wait
                whole += p.data
            }
            parts[key] = nil
            order.removeAll { $0 == key }
            return whole
        }
    }

    /// True for pcap and pcapng files, by their magic numbers (both byte orders, µs and ns pcap;
    /// pcapng's section header block 0x0A0D0D0A).
    public static func isPacketCapture(_ path: String) -> Bool {
        // Only a regular file: reading a FIFO's first bytes to look would take them from the stream.
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return false }
        guard let h = FileHandle(forReadingAtPath: path), let d = try? h.read(upToCount: 4), d.count == 4 else { return false }
        let m = [UInt8](d)
        return m == [0xD4, 0xC3, 0xB2, 0xA1] || m == [0xA1, 0xB2, 0xC3, 0xD4] || m == [0x4D, 0x3C, 0xB2, 0xA1]
            || m == [0xA1, 0xB2, 0x3C, 0x4D] || m == [0x0A, 0x0D, 0x0D, 0x0A]
    }
}
