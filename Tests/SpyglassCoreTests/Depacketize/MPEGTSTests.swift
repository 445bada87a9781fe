import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassTransport
@testable import SpyglassPipeline
@testable import SpyglassIngest

/// MPEG-TS (ISO/IEC 13818-1) from ffmpeg's own muxer, as a file and over UDP and TCP: detected,
/// demultiplexed, and every picture bit-exact; never scanned as Annex B. Serialized: two live
/// ffmpeg senders at once on two cores leave idle gaps that end a raw TS picture early.
@Suite(.serialized) struct MPEGTSTests {
    static func transportStream(codec: String = "libx264", frames: Int = 60) throws -> String {
        // Its own file per call: the tests run in parallel.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ts-\(getpid())-\(UUID().uuidString).ts").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-frames:v", String(frames), "-c:v", codec, "-preset", "ultrafast", "-g", "15",
                                                                 "-bf", "0", "-f", "mpegts", path])
        try #require(rc == 0, "\(err)")
        return path
    }

    /// The pictures ffmpeg decodes from the transport stream: the reference.
    static func expected(_ ts: String) throws -> [Fixtures.FrameHash] {
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", ts, "-map", "0:v", "-autoscale", "0", "-f", "framemd5", "-"])
        try #require(rc == 0, "\(err)")
        return Fixtures.parseFrameMD5(out)
    }

    @Test(arguments: ["libx264", "libx265"])
    func aTransportStreamFilePlaysBitExact(codec: String) throws {
        let ts = try Self.transportStream(codec: codec)
        let r = try Harness.decodeFile(ts)
        #expect(r.hashes == (try Self.expected(ts)))
        #expect(r.summary.tsPackets > 0 && r.summary.tsContinuityErrors == 0)
    }

    /// A sender that pauses inside a PES (a starved encoder, a slow link): each idle gap ends the
    /// access unit as a guess, and when more of the same PES comes the cut NAL unit is passed on
    /// again whole and repaired. Every picture still equals ffmpeg's.
    @Test func pausesInsideAPESAreRepairedBitExact() throws {
        let ts = try Self.transportStream()
        let expected = try Self.expected(ts)
        let bytes = try Fixtures.bytes(ts)
        let datagrams = stride(from: 0, to: bytes.count, by: 1316).map { Array(bytes[$0..<min(bytes.count, $0 + 1316)]) }
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: expected.count, idleFlushMicros: 1_000)
        o.maxFrames = nil        // the last picture's rest comes after its idle guess: read to the end
        o.timeoutSeconds = 1
        let h = Harness(source: udp, options: o)
        h.start()
        // A 30 ms pause before every 5th datagram: most land inside a picture's PES.
        Sender.udp(port: port, datagrams: datagrams, pauseMicros: { $0 % 5 == 4 ? 30_000 : 0 }, yieldEvery: 1)
        let r = h.finish()
        #expect(r.hashes == expected)
        #expect(r.summary.prematureIdleFlushes > 0, "the pauses cut NAL units")
        #expect(r.summary.repairs > 0)
        #expect(r.summary.tsPacketsDropped == 0, "no part of a PES is dropped after an idle gap")
    }

    /// Plays what ffmpeg sends in real time (`-re -c copy -f FORMAT URL`, `PORT` in `url` replaced)
    /// into a live pipeline on a UDP port; returns what came out and ffmpeg's framemd5 of `ts`.
    private func playFromFFmpeg(_ ts: String, format: String, url: String) throws -> (Harness.Result, [Fixtures.FrameHash]) {
        let expected = try Self.expected(ts)
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let port = udp.boundPort
        var o = Harness.liveOptions(frames: expected.count, idleFlushMicros: 1_000)
        // To the end (2 s of silence), not to a frame count: under load ffmpeg's -re pacing can
        // leave a gap inside the last picture, which the idle flush cuts; its repair comes with
        // the rest of that picture, which a frame limit stopped before (a loaded clean-clone run
        // showed the last picture cut).
        o.maxFrames = nil
        o.timeoutSeconds = 2
        let h = Harness(source: udp, options: o)
        h.start()
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-re", "-i", ts, "-c", "copy", "-f", format,
                                                                 url.replacingOccurrences(of: "PORT", with: String(port))])
        #expect(rc == 0, "\(err)")
        return (h.finish(), expected)
    }

    /// ffmpeg's MPEG-TS muxer over UDP (7 packets of 188 bytes per datagram), in real time.
    @Test func transportStreamOverUDPPlaysBitExact() throws {
        let (r, expected) = try playFromFFmpeg(try Self.transportStream(), format: "mpegts", url: "udp://127.0.0.1:PORT?pkt_size=1316")
        #expect(r.hashes == expected)
        #expect(Set(r.timings.map(\.completion)).isSubset(of: [.tsStuffing, .idleGap, .nextAccessUnit, .pesLength, .endOfStream]))
        #expect(r.timings.filter { $0.completion == .tsStuffing }.count > r.timings.count / 2, "ffmpeg stuffs the last packet of each PES: pictures end there, with no wait")
    }

    /// ffmpeg's default for `-f mpegts udp://`: 1472-byte datagrams, so TS packets are cut across
    /// datagrams and most datagrams do not start with a sync byte. Still MPEG-TS (it used to be
    /// taken for a framing change after 30 datagrams, then played as garbage).
    @Test func transportStreamInFFmpegsDefaultDatagramsPlaysBitExact() throws {
        let (r, expected) = try playFromFFmpeg(try Self.transportStream(), format: "mpegts", url: "udp://127.0.0.1:PORT")
        #expect(r.hashes == expected)
        #expect(r.summary.resets == 0 && r.summary.junkBytes == 0 && r.summary.tsContinuityErrors == 0)
    }

    /// A receiver that joins a transport stream mid-stream, in datagrams cut anywhere (the first
    /// one it sees starts inside a packet, and few start with a sync byte): MPEG-TS from the first
    /// datagram, never raw Annex B (a probe started under load once called it raw).
    @Test func aTransportStreamJoinedMidPacketIsMPEGTS() throws {
        let bytes = try Fixtures.bytes(try Self.transportStream())
        var d = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 0)
        var units = 0
        for (i, start) in stride(from: 100, to: bytes.count, by: 1249).enumerated() {
            Array(bytes[start..<min(bytes.count, start + 1249)]).withUnsafeBytes {
                d.push($0, arrivalMicros: UInt64(i), truncated: false) { if case .unit = $0 { units += 1 } }
            }
            #expect(d.framing == .mpegTS, "datagram \(i)")
        }
        #expect(units > 0)
    }

    /// RTP with payload type 33 (RFC 2250) from ffmpeg's `rtp_mpegts` muxer: detected, each
    /// payload into the TS demultiplexer, bit-exact against ffmpeg's framemd5 of the encoded
    /// stream, and RTP loss counted (none on loopback).
    @Test func rtpPayloadType33PlaysBitExact() throws {
        let (r, expected) = try playFromFFmpeg(try Self.transportStream(), format: "rtp_mpegts", url: "rtp://127.0.0.1:PORT")
        // ffmpeg's rtp_mpegts sends only whole 7-packet payloads: the TS packets left in its
        // buffer at the end never go out, so the last picture arrives cut (and is shown damaged).
        #expect(Array(r.hashes.prefix(expected.count - 1)) == Array(expected.prefix(expected.count - 1)))
        #expect(r.damaged.dropLast().allSatisfy { !$0 } && r.summary.tsContinuityErrors == 0)
        #expect(r.summary.rtp && r.summary.rtpPackets > 0 && r.summary.datagramsLost == 0 && r.summary.tsPackets > 0)
    }

    /// RTP/MP2T with packets missing: the RTP gaps are counted as loss and the pictures marked
    /// damaged, clean again at the next IDR.
    @Test func rtpPayloadType33LossIsCounted() throws {
        let ts = try Self.transportStream()
        let bytes = try Fixtures.bytes(ts)
        let chunks = stride(from: 0, to: bytes.count, by: 7 * 188).map { Array(bytes[$0..<min(bytes.count, $0 + 7 * 188)]) }
        let packets = chunks.enumerated().map { i, c in
            RTPPacket.build(marker: false, payloadType: 33, sequenceNumber: UInt16(i), timestamp: UInt32(i * 100), ssrc: 33, payload: c)
        }
        var d = AutoDepacketizer(settings: DepacketizerSettings(), datagrams: true, idleFlushMicros: 0)
        var damage = 0
        for (i, p) in packets.enumerated() where i != 40 && i != 41 {
            p.withUnsafeBytes { d.push($0, arrivalMicros: UInt64(i), truncated: false) { if case .damage = $0 { damage += 1 } } }
        }
        #expect(d.framing == .rtpMPEGTS)
        #expect(d.counts[.packetsLost] == 2 && d.counts[.rtpPackets] == packets.count - 2)
        #expect(damage >= 1)
    }

    /// A lost TS packet inside a picture: counted as a continuity error, the picture and the
    /// ones predicted from it flagged damaged, clean again at the next IDR.
    @Test func aLostPacketIsCountedAndCleanAgainAtTheNextIDR() throws {
        let ts = try Self.transportStream()
        var bytes = try Fixtures.bytes(ts)
        let expected = try Self.expected(ts)
        // Drop one video packet (PID 256) in the middle of the stream.
        let packets = bytes.count / 188
        let victim = (packets / 3..<packets).first { k in
            let p = k * 188
            return bytes[p] == 0x47 && (Int(bytes[p + 1] & 0x1F) << 8 | Int(bytes[p + 2])) == 256 && bytes[p + 1] & 0x40 == 0
        }!
        bytes.removeSubrange(victim * 188..<(victim + 1) * 188)
        let path = ts + ".lost.ts"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try Harness.decodeFile(path)
        #expect(r.summary.tsContinuityErrors == 1)
        #expect(r.summary.damagedAccessUnits >= 1)
        #expect(r.damaged.contains(true))
        // Clean again from the next IDR (every 15 pictures): the last 15 pictures are right.
        #expect(Array(r.hashes.suffix(15)) == Array(expected.suffix(15)))
        #expect(r.damaged.suffix(15).allSatisfy { !$0 })
    }

    /// A pause inside a picture longer than the idle time (a relay, a congested link): the
    /// picture ends early once, the NAL unit it cut comes again whole for the feed to repair, and
    /// the idle time doubles, so the next pause of that length does not end a picture.
    @Test func aPauseInsideAPictureDoublesTheIdleTime() throws {
        let bytes = try Fixtures.bytes(try Self.transportStream(frames: 5))
        var d = MPEGTSDepacketizer(maxUnitBytes: 1 << 20, idleFlushMicros: 1_000)
        var events: [DepacketizerEvent] = []
        // The second video PES (PID 256, payload_unit_start set), cut after its first two packets.
        let starts = stride(from: 0, to: bytes.count, by: 188).filter { (p: Int) -> Bool in
            let pid = Int(bytes[p + 1] & 0x1F) << 8 | Int(bytes[p + 2])
            return pid == 256 && bytes[p + 1] & 0x40 != 0
        }
        let cut: Int = starts[1] + 2 * 188
        bytes[0..<cut].withUnsafeBytes { d.push($0, arrivalMicros: 10_000, truncated: false) { events.append($0) } }
        #expect(d.pollTimeoutMicros(default: 50_000) == 1_000)
        d.tick(nowMicros: 11_500) { events.append($0) }   // 1.5 ms of quiet inside the picture
        bytes[cut..<bytes.count].withUnsafeBytes { d.push($0, arrivalMicros: 12_000, truncated: false) { events.append($0) } }
        let notes = events.compactMap { if case .note(let n) = $0 { return n } else { return nil } }
        #expect(notes.contains { $0.contains("pause inside a picture") && $0.contains("2 ms") }, "\(notes)")
        #expect(events.contains { if case .cut = $0 { return true } else { return false } }, "the cut unit, for repair")
        #expect(d.counts[.cutNALUnits] == 1)
    }

    /// A PMT whose CRC_32 fails (here: its video PID changed to 258 in transit) is dropped and
    /// counted; the next intact PMT chooses the stream, and the pictures are ffmpeg's.
    @Test func aCorruptPMTIsDroppedNotFollowed() throws {
        let ts = try Self.transportStream()
        var bytes = try Fixtures.bytes(ts)
        let pid = { (p: Int) in Int(bytes[p + 1] & 0x1F) << 8 | Int(bytes[p + 2]) }
        let pmt = try #require(stride(from: 0, to: bytes.count, by: 188).first { pid($0) == 0x1000 && bytes[$0 + 1] & 0x40 != 0 })
        let entry = try #require((pmt + 5..<pmt + 186).first { bytes[$0] == 0xE1 && bytes[$0 + 1] == 0x00 }, "PID 256 in the PMT")
        bytes[entry + 1] = 0x02
        let path = ts + ".badpmt.ts"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try Harness.decodeFile(path)
        let expected = try Self.expected(ts)
        #expect(r.summary.tsPacketsDropped >= 1, "the corrupt PMT is counted")
        #expect(!r.hashes.isEmpty && r.hashes == Array(expected.suffix(r.hashes.count)), "pictures from the next intact PMT on")
    }

    /// ffmpeg's stream with a non-start video packet put in after the stuffed last packet of the
    /// PES starting at each of `after` (indexes among the video PES starts); with `renumber`, the
    /// video PID's continuity counters are then rewritten in sequence, as a muxer that stuffs
    /// inside a PES would have sent them.
    static func tailAfterStuffing(_ bytes: [UInt8], after: [Int], renumber: Bool) -> [UInt8] {
        let packets = stride(from: 0, to: bytes.count, by: 188).map { Array(bytes[$0..<$0 + 188]) }
        let video = { (p: [UInt8]) in (Int(p[1] & 0x1F) << 8 | Int(p[2])) == 256 }
        let starts = packets.indices.filter { video(packets[$0]) && packets[$0][1] & 0x40 != 0 }
        let filler = packets[starts[1] + 1]                           // some packet from inside a PES
        // The last video packet before start k + 1 is PES k's stuffed tail.
        let tails = Set(after.compactMap { k in
            starts.indices.contains(k + 1) ? (starts[k]..<starts[k + 1]).last { video(packets[$0]) } : nil
        })
        var out: [[UInt8]] = []
        for (i, p) in packets.enumerated() {
            out.append(p)
            if tails.contains(i) {
                var tail = filler
                tail[3] = (tail[3] & 0xF0) | ((p[3] &+ 5) & 0x0F)   // out of sequence unless renumbered
                out.append(tail)
            }
        }
        if renumber {
            var cc: UInt8 = 0
            for i in out.indices where video(out[i]) { out[i][3] = (out[i][3] & 0xF0) | cc; cc = (cc + 1) & 0x0F }
        }
        return out.flatMap { $0 }
    }

    static func demux(_ bytes: [UInt8]) -> (notes: [String], ends: [AccessUnit.Completion], dropped: Int) {
        var d = MPEGTSDepacketizer(maxUnitBytes: 1 << 20, idleFlushMicros: 0)
        var notes: [String] = [], ends: [AccessUnit.Completion] = []
        bytes.withUnsafeBytes {
            d.push($0, arrivalMicros: 10_000, truncated: false) { e in
                if case .note(let n) = e { notes.append(n) }
                if case .accessUnitEnd(let c, _, _) = e { ends.append(c) }
            }
        }
        return (notes, ends, d.counts[.tsPacketsDropped] ?? 0)
    }

    /// One corrupt packet after a PES's stuffed end (out of sequence, or once) is dropped and
    /// counted; stuffing still ends the pictures after it (it used to be switched off for the run).
    @Test(arguments: [false, true])
    func oneStrayPacketAfterStuffingDoesNotSwitchTheRuleOff(inSequence: Bool) throws {
        let bytes = try Fixtures.bytes(try Self.transportStream(frames: 20))
        let clean = Self.demux(bytes)
        try #require(clean.ends.filter { $0 == .tsStuffing }.count >= 15, "ffmpeg stuffs each PES's last packet: \(clean.ends)")
        let r = Self.demux(Self.tailAfterStuffing(bytes, after: [3], renumber: inSequence))
        #expect(!r.notes.contains { $0.contains("stuffs packets inside a PES") }, "\(r.notes)")
        #expect(r.dropped == clean.dropped + 1, "the stray tail is dropped and counted")
        #expect(r.ends.suffix(10).allSatisfy { $0 == .tsStuffing }, "later pictures still end at their stuffing: \(r.ends)")
    }

    /// A PES start whose payload_unit_start_indicator was lost (its continuity counter in
    /// sequence): the whole headless PES is one sign, not two, so stuffing still ends the pictures
    /// after it; each of its packets is counted as dropped.
    @Test func aLostPESStartIsOneSignAndEveryPacketOfItIsCounted() throws {
        var bytes = try Fixtures.bytes(try Self.transportStream(frames: 20))
        let video = { (p: Int) in (Int(bytes[p + 1] & 0x1F) << 8 | Int(bytes[p + 2])) == 256 }
        let starts = stride(from: 0, to: bytes.count, by: 188).filter { video($0) && bytes[$0 + 1] & 0x40 != 0 }
        let headless = stride(from: starts[5], to: starts[6], by: 188).filter(video).count
        bytes[starts[5] + 1] &= 0xBF
        let clean = Self.demux(try Fixtures.bytes(try Self.transportStream(frames: 20)))
        let r = Self.demux(bytes)
        #expect(!r.notes.contains { $0.contains("stuffs packets inside a PES") }, "\(r.notes)")
        #expect(r.dropped == clean.dropped + headless, "\(r.dropped) dropped, the headless PES has \(headless) packets")
        #expect(r.ends.suffix(10).allSatisfy { $0 == .tsStuffing }, "\(r.ends)")
    }

    /// A muxer that stuffs inside a PES, shown twice by packets in sequence: PESs end at the next
    /// start from then on, said once.
    @Test func aMuxerThatStuffsInsideAPESIsFollowedAfterTheSecondSign() throws {
        let bytes = try Fixtures.bytes(try Self.transportStream(frames: 20))
        let r = Self.demux(Self.tailAfterStuffing(bytes, after: [3, 6], renumber: true))
        #expect(r.notes.filter { $0.contains("stuffs packets inside a PES") }.count == 1, "\(r.notes)")
        #expect(r.ends.suffix(10).allSatisfy { $0 != .tsStuffing }, "\(r.ends)")
    }

    @Test func onlyWholeTSPacketsOrThreeSyncBytesLookLikeTS() {
        func looks(_ b: [UInt8]) -> Bool { b.withUnsafeBytes { AutoDepacketizer.looksLikeMPEGTS($0) } }
        var ts = [UInt8](repeating: 0xFF, count: 7 * 188)
        for i in 0..<7 { ts[i * 188] = 0x47 }
        #expect(looks(ts))
        #expect(looks(Array(ts[0..<188])))
        #expect(!looks(Array(ts[0..<300])), "one sync byte and a partial packet say nothing")
        var annexB = ts
        annexB[188] = 0x00
        #expect(!looks(annexB))
        #expect(!looks([0, 0, 0, 1, 0x67] + [UInt8](repeating: 0x47, count: 400)))
    }
}
