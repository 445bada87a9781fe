import Foundation
import Testing
import TestSupport
@testable import SpyglassTransport

/// The streaming parser on pymavlink's frames (tools/mavlink-vehicle), whole, cut, and damaged.
@Suite struct MAVLinkParserTests {
    /// Every byte pushed is in a good frame, skipped, or held.
    static func accounted(_ p: MAVLinkParser, _ frames: [MAVLinkFrame]) -> Int {
        frames.reduce(0) { $0 + $1.raw.count } + p.counters.bytesSkipped + p.bufferedByteCount
    }

    @Test func theChecksumIsCRC16MCRF4XX() {
        #expect(MAVLinkCRC.checksum(Array("123456789".utf8)) == 0x6F91, "CRC-16/MCRF4XX check value")
    }

    @Test func anArduPilotMAVLink2StreamParsesWhole() throws {
        let s = try MAVLinkFixtures.ardupilot.get()
        var p = MAVLinkParser()
        let frames = p.push(s.bytes)
        let counts = try #require(s.info.final?.counts)
        #expect(p.counters.framesGood == counts.values.reduce(0, +))
        #expect(Dictionary(grouping: frames, by: { String($0.messageID) }).mapValues(\.count) == counts)
        #expect(frames.allSatisfy { $0.version == 2 && !$0.signed && $0.systemID == 1 && $0.componentID == 1 })
        #expect(frames.map(\.sequence) == (0..<frames.count).map { UInt8(truncatingIfNeeded: $0) })
        #expect(p.counters.bytesSkipped == 0 && p.bufferedByteCount == 0 && p.counters.crcErrors == 0)
        #expect(frames.reduce([]) { $0 + $1.raw } == s.bytes, "raw is the bytes as received")
    }

    @Test func aPX4MAVLink1StreamParsesWhole() throws {
        let s = try MAVLinkFixtures.px4.get()
        var p = MAVLinkParser()
        let frames = p.push(s.bytes)
        #expect(p.counters.framesGood == s.info.final?.counts.values.reduce(0, +))
        #expect(p.counters.framesV1 == frames.count && frames.allSatisfy { $0.version == 1 })
        #expect(Self.accounted(p, frames) == s.bytes.count && p.counters.bytesSkipped == 0)
    }

    /// A trailing-zero-truncated MAVLink 2 payload comes out at the message's full length.
    @Test func truncatedPayloadsAreZeroExtended() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        let sys = try #require(frames.first { $0.messageID == 1 })
        #expect(sys.raw.count < 12 + 43, "pymavlink dropped SYS_STATUS's zero extension fields")
        #expect(sys.payload.count == 43 && sys.payload.suffix(12).allSatisfy { $0 == 0 })
        #expect(frames.allSatisfy { $0.payload.count == MAVLinkDialect.common[$0.messageID]?.length })
    }

    @Test func signedFramesAreReadAndTheirSignatureSkipped() throws {
        let signed = MAVLinkFixtures.frames(try MAVLinkFixtures.signed.get().bytes)
        var plain = MAVLinkParser()
        let unsigned = plain.push(try MAVLinkFixtures.ardupilot.get().bytes).prefix(signed.count)
        #expect(!signed.isEmpty && signed.allSatisfy { $0.signed && $0.raw[2] == 0x01 })
        #expect(signed.map(\.payload) == unsigned.map(\.payload), "the same messages, signed")
        #expect(zip(signed, unsigned).allSatisfy { $0.raw.count == $1.raw.count + 13 })
    }

    @Test func anyCutGivesTheSameFrames() throws {
        let bytes = try MAVLinkFixtures.px4.get().bytes + MAVLinkFixtures.signed.get().bytes
        let whole = MAVLinkFixtures.frames(bytes)
        var single = MAVLinkParser()
        #expect(bytes.flatMap { single.push([$0]) } == whole, "one byte at a time")
        var rng = SeededRandom(seed: 24)
        for _ in 0..<20 {
            var p = MAVLinkParser(), i = 0, frames: [MAVLinkFrame] = []
            while i < bytes.count {
                let n = min(bytes.count - i, rng.next(in: 1...300))
                frames += p.push(bytes[i..<(i + n)])
                i += n
            }
            #expect(frames == whole)
        }
    }

    @Test func garbageBetweenFramesIsSkippedAndCounted() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        var rng = SeededRandom(seed: 7)
        var stream: [UInt8] = [], garbage = 0
        for f in frames {
            let junk = (0..<rng.next(in: 0...40)).map { _ in UInt8(rng.next(in: 0...0xFC)) }
            stream += junk + f.raw
            garbage += junk.count
        }
        var p = MAVLinkParser()
        #expect(p.push(stream) == frames)
        #expect(p.counters.bytesSkipped == garbage)
    }

    @Test func aCorruptedCRCIsCountedAndTheNextFrameParsed() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        // A frame with no magic byte after its own, so that exactly one candidate fails.
        let k = try #require(frames.indices.dropFirst().first { !frames[$0].raw.dropFirst().contains { $0 >= 0xFD } })
        var stream = frames.flatMap(\.raw)
        let crcAt = frames[..<k].reduce(0) { $0 + $1.raw.count } + frames[k].raw.count - 1
        stream[crcAt] ^= 0x5A
        var p = MAVLinkParser()
        var expected = frames
        expected.remove(at: k)
        #expect(p.push(stream) == expected)
        #expect(p.counters.crcErrors == 1 && p.counters.bytesSkipped == frames[k].raw.count)
    }

    @Test func aTruncatedFrameIsHeldUntilItsRestComes() throws {
        let s = try MAVLinkFixtures.ardupilot.get()
        let frames = MAVLinkFixtures.frames(s.bytes)
        var p = MAVLinkParser()
        let cut = s.bytes.count - 5
        #expect(p.push(s.bytes[..<cut]) == Array(frames.dropLast()))
        #expect(p.bufferedByteCount == (frames.last?.raw.count ?? 0) - 5)
        var ended = p
        #expect(p.push(s.bytes[cut...]) == [frames.last])
        let rest = ended.finish()
        #expect(rest.isEmpty)
        #expect(ended.counters.truncatedFrames >= 1 && ended.bufferedByteCount == 0)
        #expect(Self.accounted(ended, frames.dropLast()) == cut)
    }

    @Test func aFrameAloneIsJudgedExactly() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes + MAVLinkFixtures.signed.get().bytes)
        #expect(frames.allSatisfy { MAVLinkParser.frame(exactly: $0.raw) == $0 })
        let f = try #require(frames.first)
        #expect(MAVLinkParser.frame(exactly: f.raw + [0]) == nil, "a byte after it")
        #expect(MAVLinkParser.frame(exactly: f.raw.dropLast()) == nil, "cut short")
        #expect(MAVLinkParser.frame(exactly: [0] + f.raw) == nil, "a byte before it")
        #expect(MAVLinkParser.frame(exactly: []) == nil)
    }

    /// A whole frame hidden inside a candidate that never completes is found at the end.
    @Test func finishRescansTheHeldBytes() throws {
        let heartbeat = try #require(MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes).first)
        var p = MAVLinkParser()
        let stream = [0xFD, 200, 0, 0, 0, 1, 1, 33, 0, 0] + heartbeat.raw   // GLOBAL_POSITION_INT, 200 bytes
        #expect(p.push(stream).isEmpty && p.bufferedByteCount == stream.count)
        #expect(p.finish() == [heartbeat])
        #expect(p.counters.truncatedFrames == 1 && p.counters.bytesSkipped == 10)
    }
}
