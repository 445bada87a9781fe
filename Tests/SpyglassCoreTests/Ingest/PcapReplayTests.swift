import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport
@testable import SpyglassIngest

/// Packet captures: our own sender captured with tcpdump on loopback, hand-built captures with
/// IP fragments, and mangled files.
///
/// Serialized: one test captures loopback with tcpdump while spyglass sends to it.
@Suite(.serialized) struct PcapReplayTests {
    static let tcpdump = "/usr/bin/tcpdump"

    private func decode(_ source: sending ByteSource) -> Harness.Result {
        var o = ReceiverOptions()
        o.idleFlushMicros = 1_000
        let h = Harness(source: source, options: o)
        h.start()
        return h.finish()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: tcpdump),
                   "/usr/bin/tcpdump not found: install the tcpdump package (tools/setup does)"))
    func tcpdumpCaptureOfOurSenderReplaysBitExact() throws {
        let tcpdump = Self.tcpdump
        let raw = Fixtures.capture("test/h264-aud.h264"), rtp = Fixtures.capture("test/h265-main.h265")
        let tmp = FileManager.default.temporaryDirectory
        let pcap = tmp.appendingPathComponent("lo-\(getpid()).pcap").path
        let dumpLog = tmp.appendingPathComponent("lo-\(getpid()).tcpdump.txt").path
        defer { try? FileManager.default.removeItem(atPath: dumpLog) }
        // portC carries only an end marker, so that the capture can be known complete.
        let portA = try Sender.freeUDPPort(), portB = try Sender.freeUDPPort(), portC = try Sender.freeUDPPort()
        let dump = Process()
        dump.executableURL = URL(fileURLWithPath: tcpdump)
        dump.arguments = ["-i", "lo", "-U", "-w", pcap, "udp and (port \(portA) or port \(portB) or port \(portC))"]
        // Its messages go to a file (never a pipe nobody reads): "listening on lo" says it is capturing.
        #expect(FileManager.default.createFile(atPath: dumpLog, contents: nil))
        dump.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: dumpLog))
        dump.standardOutput = FileHandle.nullDevice
        try Fixtures.launch(dump)   // with SIGINT unblocked: it is stopped with one
        defer { if dump.isRunning { dump.terminate(); dump.waitUntilExit() } }
        func log() -> String { (try? String(contentsOfFile: dumpLog, encoding: .utf8)) ?? "" }
        let listening = Wait.until { log().contains("listening on") || !dump.isRunning }
        guard listening && dump.isRunning else {
            Issue.record("tcpdump did not start capturing on lo within 10 s (it needs root or CAP_NET_RAW): \(log())")
            return
        }
        for (file, port, extra) in [(raw, portA, [String]()), (rtp, portB, ["--rtp", "--mtu", "700"])] {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["send", file, "udp://127.0.0.1:\(port)"] + extra)
            #expect(rc == 0, "\(err)")
        }
        // tcpdump writes packets in the order it captured them (-U: each one as it comes): once the
        // marker sent after both streams is in the file, so is everything before it.
        let marker = Array("spyglass-pcap-end-marker".utf8)
        let complete = Wait.until(timeoutSeconds: 10, pollMillis: 50) {
            if let d = FileManager.default.contents(atPath: pcap), d.range(of: Data(marker)) != nil { return true }
            Sender.udp(port: portC, datagrams: [marker])
            return false
        }
        dump.interrupt()
        dump.waitUntilExit()
        #expect(complete, "the end marker reached the capture file within 10 s: \(log())")
        // Two flows: the choice must be made.
        if let error = #expect(throws: (any Error).self, performing: { try PcapSource(path: pcap) }) {
            #expect("\(error)".contains("several UDP flows"), "\(error)")
        }
        let a = try PcapSource(path: pcap, port: portA, speed: 0)
        let ra = decode(a)
        #expect(ra.hashes == (try Fixtures.ffmpegFrameMD5(raw)))
        let b = try PcapSource(path: pcap, port: portB, speed: 0)
        let rb = decode(b)
        #expect(rb.hashes == (try Fixtures.ffmpegFrameMD5(rtp)))
        #expect(rb.summary.rtp)
    }

    /// A hand-built capture (raw IP link type): each access unit in one UDP datagram, the large
    /// ones cut into IPv4 fragments, plus non-UDP packets and a truncated (snaplen) packet.
    @Test func fragmentsAreReassembledAndOtherTrafficCounted() throws {
        let path = Fixtures.capture("cases/field-320x240-60au.h264")
        let aus = Sender.accessUnits(of: try Fixtures.bytes(path))
        var file: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 101, 0, 0, 0]
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 24) & 0xFF)] }
        var t = 0
        func record(_ packet: [UInt8], caplen: Int? = nil) {
            let cap = caplen ?? packet.count
            file += le32(1_700_000_000) + le32(t) + le32(cap) + le32(packet.count) + Array(packet.prefix(cap))
            t += 1_000
        }
        func ipv4(_ payload: [UInt8], proto: UInt8, id: Int, offset: Int, more: Bool) -> [UInt8] {
            let total = 20 + payload.count
            let fo = (offset / 8) | (more ? 0x2000 : 0)
            return [0x45, 0, UInt8(total >> 8), UInt8(total & 0xFF), UInt8(id >> 8), UInt8(id & 0xFF),
                    UInt8(fo >> 8), UInt8(fo & 0xFF), 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2] + payload
        }
        var fragmented = 0
        for (i, au) in aus.enumerated() {
            let udp: [UInt8] = [0x13, 0x88, 0x15, 0xE0, UInt8((au.count + 8) >> 8), UInt8((au.count + 8) & 0xFF), 0, 0] + au
            if udp.count > 1480 {
                fragmented += 1
                var off = 0
                while off < udp.count {
                    let n = min(1480, udp.count - off)
                    record(ipv4(Array(udp[off..<(off + n)]), proto: 17, id: i, offset: off, more: off + n < udp.count))
                    off += n
                }
            } else {
                record(ipv4(udp, proto: 17, id: i, offset: 0, more: false))
            }
            if i % 10 == 0 { record(ipv4([8, 0, 0, 0, 0, 0, 0, 0], proto: 1, id: 9000 + i, offset: 0, more: false)) }  // ICMP
        }
        record(ipv4([0x13, 0x88, 0x15, 0xE0, 0, 200] + [UInt8](repeating: 0, count: 200), proto: 17, id: 9999, offset: 0, more: false), caplen: 60)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("frag-\(getpid()).pcap")
        try Data(file).write(to: url)
        let source = try PcapSource(path: url.path, speed: 0)
        #expect(fragmented > 0)
        #expect(source.counts.fragmentsReassembled == fragmented)
        #expect(source.counts.nonUDP == 6)
        #expect(source.counts.truncated == 1)
        let r = decode(source)
        let expected = try Fixtures.ffmpegFrameMD5(path)
        #expect(r.hashes == expected)
        // `play` takes a capture as packets too, not as a raw Annex B file.
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", url.path, "--display", "none", "--untimed"])
        #expect(rc == 0, "\(err)")
        #expect(err.contains("a packet capture: playing its UDP flow"), "\(err)")
        #expect(err.contains("\(expected.count) frames decoded"), "\(err)")
        #expect(!err.contains("junk bytes"), "\(err)")
    }

    @Test func mangledCapturesGiveClearErrors() throws {
        let tmp = FileManager.default.temporaryDirectory
        let empty = tmp.appendingPathComponent("empty-\(getpid()).pcap")
        try Data([0xD4, 0xC3, 0xB2, 0xA1]).write(to: empty)
        #expect(throws: (any Error).self) { try PcapSource(path: empty.path) }
        let noUDP = tmp.appendingPathComponent("noudp-\(getpid()).pcap")
        try Data([0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 101, 0, 0, 0]).write(to: noUDP)
        if let error = #expect(throws: (any Error).self, performing: { try PcapSource(path: noUDP.path) }) {
            #expect("\(error)".contains("no UDP traffic"), "\(error)")
        }
        // Random bytes after a valid header: an error or an empty flow list, never a crash.
        var rng = SeededRandom(seed: 3)
        let junk = tmp.appendingPathComponent("junk-\(getpid()).pcap")
        try Data([0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0]
                 + (0..<5000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }).write(to: junk)
        #expect(throws: (any Error).self) { try PcapSource(path: junk.path) }
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["replay", junk.path, "--display", "none"])
        #expect(rc != 0)
        #expect(err.hasPrefix("spyglass: error:"), "\(err)")
    }
}
