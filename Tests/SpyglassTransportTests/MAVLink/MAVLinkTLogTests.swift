import Foundation
import Testing
@testable import SpyglassTransport

/// .tlog records: written and read back, and as pymavlink's mavutil writes them.
@Suite struct MAVLinkTLogTests {
    @Test func aRecordIsABigEndianTimestampThenTheFrame() throws {
        let frame = try #require(MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes).first)
        let record = TLog.record(frame: frame, utcMicros: 0x0102_0304_0506_0708)
        #expect(record == [1, 2, 3, 4, 5, 6, 7, 8] + frame.raw)
    }

    @Test func recordsReadBack() throws {
        let frames = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes + MAVLinkFixtures.signed.get().bytes)
        let log = frames.enumerated().flatMap { TLog.record(frame: $1, utcMicros: 1_764_600_000_000_000 + UInt64($0) * 1000) }
        let read = TLog.read(log)
        #expect(read.map(\.frame) == frames)
        #expect(read.map(\.utcMicros) == frames.indices.map { 1_764_600_000_000_000 + UInt64($0) * 1000 })
    }

    @Test func aTruncatedTailAndADamagedRecordAreSteppedOver() throws {
        let frames = Array(MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes).prefix(30))
        var log = frames.flatMap { TLog.record(frame: $0, utcMicros: 1_764_600_000_000_000) }
        let damaged = 8 + frames[0].raw.count + 8 + 3   // in the second record's frame header
        log[damaged] ^= 0xFF
        let read = TLog.read(log.dropLast(4))
        #expect(read.map(\.frame) == [frames[0]] + frames[2..<29])
    }

    /// tools/mavlink-vehicle --tlog: pymavlink re-reads the frames it sent and logs them with
    /// mavutil's own writer (setup_logfile: '>Q' µs, low two bits clear, then get_msgbuf()).
    @Test func pymavlinksOwnTLogReadsBack() throws {
        let s = try MAVLinkFixtures.vehicle(["--count", "25", "--gcs-heartbeat"], tlog: true)
        let frames = MAVLinkFixtures.frames(s.bytes)
        let read = TLog.read(s.tlog)
        #expect(!frames.isEmpty && read.map(\.frame) == frames)
        let now = UInt64(Date().timeIntervalSince1970 * 1e6)
        #expect(read.allSatisfy { $0.utcMicros & 3 == 0 && $0.utcMicros + 3_600_000_000 > now && $0.utcMicros < now + 60_000_000 })
        #expect(zip(read, read.dropFirst()).allSatisfy { $0.utcMicros <= $1.utcMicros })
    }
}
