import Foundation
import Testing
@testable import SpyglassFeed

/// `--record NAME` never overwrites an earlier recording: the next free `NAME-2`, `NAME-3`, …
@Suite struct RecordingNameTests {
    @Test func aFreeNameIsKept() {
        #expect(RecordingName.unused("flight", exists: { _ in false }) == "flight")
        #expect(RecordingName.unused("/data/flight.ts", exists: { _ in false }) == "/data/flight.ts")
    }

    @Test func aTakenNameGetsTheFirstFreeNumberBeforeItsExtension() {
        let there: Set = ["flight.mkv", "flight-2.mkv", "cam.h264.idx", "a.b.ts"]
        #expect(RecordingName.unused("flight", exists: there.contains) == "flight-3")
        #expect(RecordingName.unused("flight.mkv", exists: there.contains) == "flight-3.mkv")
        #expect(RecordingName.unused("cam.h264", exists: there.contains) == "cam-2.h264")
        #expect(RecordingName.unused("a.b.ts", exists: there.contains) == "a.b-2.ts")
    }

    @Test func theExtensionKeepsItsSpellingAndTheNumbersGoOn() {
        #expect(RecordingName.unused("g.MKV", exists: { $0 == "g.MKV" }) == "g-2.MKV")
        let there = Set(["f.mkv"] + (2...10_050).map { "f-\($0).mkv" })
        #expect(RecordingName.unused("f", exists: there.contains) == "f-10051")
    }

    /// Two feeds of one process never get one name: the second passes over what the first took.
    @Test func aNameTakenByAnotherFeedIsPassedOver() {
        let base = "/nonexistent-\(getpid())-\(Int.random(in: 0...1_000_000))/w"
        let a = RecordingName.claim(base), b = RecordingName.claim(base + ".mkv"), c = RecordingName.claim(base)
        #expect(a == base && b == base + "-2.mkv" && c == base + "-3", "\(a) \(b) \(c)")
    }

    @Test func aSplitRecordingOrATelemetryLogBesideItTakesTheName() {
        #expect(RecordingName.unused("flight", exists: { $0 == "flight-000.mkv" }) == "flight-2")
        #expect(RecordingName.unused("cam.h265", exists: { $0 == "cam-000.h265" }) == "cam-2.h265")
        // A raw recording is named by the codec it holds: q.264 splits into q.264-000.h264.
        #expect(RecordingName.unused("q.264", exists: { $0 == "q.264-000.h264" }) == "q-2.264")
        #expect(RecordingName.unused("hv.h264", exists: { $0 == "hv.h264-000.h265" }) == "hv-2.h264")
        #expect(RecordingName.unused("flight.mp4", exists: { $0 == "flight.tlog" }) == "flight-2.mp4")
    }

    /// The same `--record` twice: both recordings are there, whole, and the second run says
    /// where it wrote.
    @Test func recordingTwiceUnderOneNameKeepsBoth() throws {
        let capture = Fixtures.capture("test/h264-baseline.h264")
        let file = ContainerRecorderTests.temporary("twice.mkv")
        let expected = try Fixtures.ffmpegFrameMD5(capture)
        let (rc1, _, err1) = try Fixtures.run(Fixtures.spyglassBinary, ["play", capture, "--display", "none", "--record", file])
        try #require(rc1 == 0, "\(err1)")
        let first = try Data(contentsOf: URL(fileURLWithPath: file))
        let (rc2, _, err2) = try Fixtures.run(Fixtures.spyglassBinary, ["play", capture, "--display", "none", "--record", file])
        try #require(rc2 == 0, "\(err2)")
        let second = String(file.dropLast(4)) + "-2.mkv"
        #expect(err2.contains("recording into \(second) instead"), "\(err2)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == first, "the first recording is untouched")
        #expect(try Fixtures.ffmpegFrameMD5(file) == expected)
        #expect(try Fixtures.ffmpegFrameMD5(second) == expected)
    }
}
