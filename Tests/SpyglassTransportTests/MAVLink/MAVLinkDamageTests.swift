import Foundation
import Testing
import TestSupport
@testable import SpyglassTransport

/// Frames the parser must drop, count and scan past: unknown ids, lengths, flags, stray bytes.
@Suite struct MAVLinkDamageTests {
    /// AHRS (ardupilotmega.xml, message 163), made by pymavlink: not in common.xml.
    static func ahrsFrame() throws -> [UInt8] {
        let code = """
        import sys
        from pymavlink.dialects.v20 import ardupilotmega as m
        class Out:
            def write(self, b): sys.stdout.buffer.write(b)
        m.MAVLink(Out(), 1, 1).ahrs_send(0.01, 0.02, 0.03, 0.1, 0.2, 0.5, 0.7)
        """
        return [UInt8](try MAVLinkFixtures.run(["-c", code]))
    }

    @Test func unknownMessageIDsAreCountedAndDropped() throws {
        let ahrs = try Self.ahrsFrame()
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes).prefix(5)
        var p = MAVLinkParser()
        #expect(ahrs.count == 12 + 28 && ahrs[7] == 163)
        #expect(p.push(ahrs + frames.flatMap(\.raw)) == Array(frames))
        #expect(p.counters.unknownMessages >= 1 && p.counters.bytesSkipped == ahrs.count)
        var dialect = MAVLinkDialect.common
        dialect.messages[163] = .init(crcExtra: 127, length: 28)   // ardupilotmega.xml's AHRS
        var known = MAVLinkParser(dialect: dialect)
        #expect(known.push(ahrs).map(\.messageID) == [163], "a dialect that knows it takes it")
    }

    /// A MAVLink 2 length byte turned into 255: the parser reads past the frame, the CRC fails,
    /// and the frames it swallowed are found by the rescan.
    @Test func anOversizedMAVLink2LengthIsRescannedPast() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        var stream = frames.flatMap(\.raw)
        stream[1] = 255
        var p = MAVLinkParser()
        #expect(p.push(stream) == Array(frames.dropFirst()))
        #expect(p.counters.crcErrors >= 1 && p.bufferedByteCount == 0)
    }

    /// MAVLink 1 carries no extensions: a length beyond the message's is dropped at the header.
    @Test func anOversizedMAVLink1LengthIsDroppedAtOnce() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes)
        var stream = frames.flatMap(\.raw)
        stream[1] = 200   // HEARTBEAT is 9 bytes
        var p = MAVLinkParser()
        #expect(p.push(stream.prefix(frames[0].raw.count + frames[1].raw.count)) == [frames[1]],
                "no waiting for 200 bytes")
        #expect(p.counters.badLengths == 1)
    }

    /// MAVLink 2 with a good CRC but a payload longer than common.xml's (extension fields of a
    /// newer definition) is taken, as pymavlink and the C library take it.
    @Test func aLongerMAVLink2PayloadWithAGoodCRCIsTaken() {
        let payload: [UInt8] = [5, 0, 0, 0, 2, 3, 0x81, 4, 3, 9, 9, 9]
        var p = MAVLinkParser()
        let frames = p.push(MAVLinkFixtures.encode(id: 0, payload: payload, crcExtra: 50))
        #expect(frames.map(\.payload) == [payload])
        #expect(p.counters.framesLongerThanKnown == 1)
        if let f = frames.first, case .heartbeat(let hb)? = MAVLinkMessage(f) { #expect(hb.modeName == "LOITER") }
    }

    @Test func unknownIncompatFlagsAreDropped() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        var stream = frames.flatMap(\.raw)
        stream[2] = 0x02
        var p = MAVLinkParser()
        #expect(p.push(stream) == Array(frames.dropFirst()))
        #expect(p.counters.badIncompatFlags == 1)
    }

    /// MAVLink 1 has no signature: 13 signature bytes after a MAVLink 1 frame are stray bytes.
    @Test func aSignatureAfterAMAVLink1FrameIsSkipped() throws {
        let v1 = MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes)
        let signature = try #require(MAVLinkFixtures.frames(try MAVLinkFixtures.signed.get().bytes).first?.raw.suffix(13))
        let stream = v1[0].raw + signature + v1.dropFirst().flatMap(\.raw)
        var p = MAVLinkParser()
        #expect(p.push(stream) == v1)
        #expect(p.counters.bytesSkipped == 13)
    }

    /// Random bytes: no crash, nothing held beyond one frame, every byte accounted for.
    @Test func noiseIsBoundedAndAccounted() {
        var rng = SeededRandom(seed: 3)
        var noise = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for i in stride(from: 0, to: noise.count, by: 97) { noise[i] = i % 2 == 0 ? 0xFD : 0xFE }
        var p = MAVLinkParser(), frames: [MAVLinkFrame] = []
        for chunk in stride(from: 0, to: noise.count, by: 1000) {
            frames += p.push(noise[chunk..<min(noise.count, chunk + 1000)])
            #expect(p.bufferedByteCount < MAVLinkFrame.maxLength)
        }
        #expect(MAVLinkParserTests.accounted(p, frames) == noise.count)
    }
}
