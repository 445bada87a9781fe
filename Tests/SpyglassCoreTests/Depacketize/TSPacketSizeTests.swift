import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassBitstream
@testable import SpyglassTransport
@testable import SpyglassPipeline

/// MPEG-TS packets of 188, 192 (M2TS: AVCHD, Blu-ray) and 204 bytes (DVB parity), told from the
/// sync bytes' spacing (issue 22): each size is told as itself, and no other framing is taken
/// for one of them; the summary and probe say which.
@Suite struct TSPacketSizeTests {
    /// `count` packets of `size` bytes: sync byte in place, the rest 0xFF (no other 0x47).
    static func packets(_ size: TSPacketSize, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<count {
            var p = [UInt8](repeating: 0xFF, count: size.rawValue)
            p[size.packetOffset] = 0x47
            out += p
        }
        return out
    }

    static func detect(_ b: [UInt8]) -> TSPacketSize? { b.withUnsafeBytes { TSPacketSize.detect($0) } }

    @Test(arguments: TSPacketSize.allCases)
    func eachSizeIsToldAsItselfAndNoOther(size: TSPacketSize) {
        #expect(Self.detect(Self.packets(size, count: 7)) == size, "a datagram of 7 packets")
        #expect(Self.detect(Array(Self.packets(size, count: 4).dropLast(50))) == size, "a byte stream's start: 3 whole packets and a part")
        for other in TSPacketSize.allCases where other != size {
            #expect(Self.detect(Self.packets(other, count: 7)) != size, "\(other.rawValue)-byte packets are not \(size.rawValue)")
        }
    }

    /// A byte stream cut anywhere: its length says nothing, so the same bytes pushed a byte at a
    /// time and all at once are told the same size (a fuzz run found 188 taken at the 188th byte
    /// of a stream that three sync bytes showed to be 204).
    @Test(arguments: TSPacketSize.allCases)
    func aByteStreamIsToldTheSameSizeHoweverItIsCut(size: TSPacketSize) {
        let stream = Self.packets(size, count: 5)
        let oneOf188 = Array(stream.prefix(188))
        #expect(oneOf188.withUnsafeBytes { TSPacketSize.detect($0, wholePackets: false) } == nil || size == .standard,
                "188 bytes of a stream are not yet a 188-byte stream")
        func sizeAfterPushing(step: Int) -> TSPacketSize? {
            var d = MPEGTSDepacketizer(maxUnitBytes: 1 << 16, idleFlushMicros: 0)
            for start in stride(from: 0, to: stream.count, by: step) {
                Array(stream[start..<min(stream.count, start + step)]).withUnsafeBytes {
                    d.push($0, arrivalMicros: 1, truncated: false) { _ in }
                }
            }
            return d.size
        }
        #expect(sizeAfterPushing(step: 1) == size, "a byte at a time")
        #expect(sizeAfterPushing(step: 188) == size, "188 at a time")
        #expect(sizeAfterPushing(step: stream.count) == size, "all at once")
    }

    @Test func otherFramingsAreNoTransportStream() {
        let annexB: [UInt8] = [0, 0, 0, 1, 0x67] + [UInt8](repeating: 0x11, count: 1300)
        #expect(Self.detect(annexB) == nil, "Annex B")
        var sps47 = [UInt8](repeating: 0x11, count: 192)
        sps47[0...4] = [0, 0, 0, 1, 0x47]   // an SPS with nal_ref_idc 2: 0x47 where an M2TS sync byte would be
        #expect(Self.detect(sps47) == nil, "one 192-byte Annex B datagram is not an M2TS packet")
        let rtp: [UInt8] = [0x80, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9] + [UInt8](repeating: 0x47, count: 8) + [UInt8](repeating: 0, count: 1300)
        #expect(Self.detect(rtp) == nil, "RTP")
        var shifted = Self.packets(.timestamped, count: 7)
        shifted[4 + 192] = 0x00   // one sync byte missing: not a whole number of packets
        #expect(Self.detect(shifted) == nil)
        // Through the framing detector, as datagrams: M2TS and 204-byte packets are MPEG-TS.
        for size in [TSPacketSize.timestamped, .withParity] {
            var auto = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 1_000)
            Self.packets(size, count: 7).withUnsafeBytes { auto.push($0, arrivalMicros: 1, truncated: false) { _ in } }
            #expect(auto.framing == .mpegTS, "\(size.rawValue)")
        }
        var raw = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 1_000)
        sps47.withUnsafeBytes { raw.push($0, arrivalMicros: 1, truncated: false) { _ in } }
        #expect(raw.framing == .annexB)
    }

    /// ffmpeg's own transport stream, its M2TS (`-mpegts_m2ts_mode 1`), and the same with 16
    /// bytes of parity after each packet, play bit-exact, and the demultiplexer says the size.
    @Test(arguments: TSPacketSize.allCases)
    func eachSizePlaysBitExact(size: TSPacketSize) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tssize-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("stream.ts").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-frames:v", "30", "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-bf", "0",
                                                                 "-f", "mpegts"] + (size == .timestamped ? ["-mpegts_m2ts_mode", "1"] : []) + [path])
        try #require(rc == 0, "\(err)")
        if size == .withParity {
            let ts = try Fixtures.bytes(path)
            try #require(ts.count % 188 == 0)
            var out: [UInt8] = []
            for i in stride(from: 0, to: ts.count, by: 188) { out += ts[i..<(i + 188)] + [UInt8](repeating: 0, count: 16) }
            try Data(out).write(to: URL(fileURLWithPath: path))
        }
        let bytes = try Fixtures.bytes(path)
        #expect(bytes.count % size.rawValue == 0)
        var notes: [String] = []
        var ts = MPEGTSDepacketizer(maxUnitBytes: 1 << 20, idleFlushMicros: 0)
        bytes.withUnsafeBytes { ts.push($0, arrivalMicros: 1, truncated: false) { if case .note(let n) = $0 { notes.append(n) } } }
        #expect(ts.size == size)
        #expect(notes.contains { $0.contains("\(size.rawValue)-byte packets") } == (size != .standard), "\(notes)")
        let r = try Harness.decodeFile(path)
        #expect(r.hashes == (try MPEGTSTests.expected(MPEGTSTests.transportStream(frames: 30))), "\(size.rawValue)-byte packets")
        #expect(r.summary.tsContinuityErrors == 0 && r.summary.framesDecoded == 30)
        #expect(r.summary.tsPacketBytes == size.rawValue, "the summary says the size")
        let (probeStatus, out, probeErr) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", path])
        #expect(probeStatus == 0 && out.contains("MPEG-TS") && out.contains("\(size.rawValue)-byte packets"), "probe says the size: \(out)\(probeErr)")
    }
}
