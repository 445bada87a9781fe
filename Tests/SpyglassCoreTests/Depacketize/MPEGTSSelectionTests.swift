import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassTransport
@testable import SpyglassIngest

/// `?program=N` and `?pid=N` choose the program or video PID of an MPEG-TS; one that is not
/// there is a one-line error naming what is.
@Suite struct MPEGTSSelectionTests {
    /// Two programs from ffmpeg's muxer: program 1 (PID 256) testsrc2, program 2 (PID 257) SMPTE bars.
    static func twoPrograms() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ts2-\(getpid())-\(UUID().uuidString).ts").path
        let (rc, _, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                                                                 "-f", "lavfi", "-i", "smptebars=size=320x240:rate=30", "-frames:v", "30",
                                                                 "-map", "0:v", "-map", "1:v", "-c:v", "libx264", "-preset", "ultrafast",
                                                                 "-g", "15", "-bf", "0", "-program", "program_num=1:st=0",
                                                                 "-program", "program_num=2:st=1", "-f", "mpegts", path])
        try #require(rc == 0, "\(err)")
        return path
    }

    static func expected(_ ts: String, video: Int) throws -> [Fixtures.FrameHash] {
        let (rc, out, err) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-i", ts, "-map", "0:v:\(video)", "-autoscale", "0", "-f", "framemd5", "-"])
        try #require(rc == 0, "\(err)")
        return Fixtures.parseFrameMD5(out)
    }

    @Test func theSelectionComesOffTheURLAndTheRestStays() throws {
        #expect(try SourceURL(parsing: "udp://:5600?program=2") == .selecting(.udp(host: nil, port: 5600), MPEGTSSelection(program: 2)))
        #expect(try SourceURL(parsing: "udp://239.1.2.3:5600?iface=eth0&pid=257")
                == .selecting(.udp(host: "239.1.2.3", port: 5600, interface: "eth0"), MPEGTSSelection(pid: 257)))
        #expect(try SourceURL(parsing: "tcp://cam:9000?pid=300") == .selecting(.tcpConnect(host: "cam", port: 9000), MPEGTSSelection(pid: 300)))
        #expect(try SourceURL(parsing: "flight.ts?program=1&pid=256") == .selecting(.file(path: "flight.ts"), MPEGTSSelection(program: 1, pid: 256)))
        #expect(try SourceURL(parsing: "what?.ts") == .file(path: "what?.ts"), "a file name with ? and no selection is a file name")
        #expect(try SourceURL(parsing: "udp://:5600?iface=eth0&program=3").description == "udp://:5600?iface=eth0&program=3")
        // On RTSP too (an MP2T track); the rest of a camera's query is its own.
        #expect(try SourceURL(parsing: "rtsp://cam/stream?channel=1&program=2").mpegtsSelection == MPEGTSSelection(program: 2))
        #expect(try SourceURL(parsing: "rtsp://cam/stream?channel=1&program=2").transport.description == "rtsp://cam/stream?channel=1")
        #expect(throws: MPEGTSSelection.ParseError.badValue("pid=9000")) { try SourceURL(parsing: "udp://:5600?pid=9000") }
        #expect(throws: MPEGTSSelection.ParseError.badValue("program=x")) { try SourceURL(parsing: "a.ts?program=x") }
    }

    /// A key given twice, or an option the scheme does not know, is an error that says so, not a
    /// silent last-one-wins or an option ignored.
    @Test func repeatsAndUnknownOptionsAreErrors() {
        #expect(throws: MPEGTSSelection.ParseError.repeated("program")) { try SourceURL(parsing: "udp://:5600?program=1&program=2") }
        #expect(throws: MPEGTSSelection.ParseError.repeated("pid")) { try SourceURL(parsing: "a.ts?pid=256&pid=257") }
        #expect(throws: SourceURL.ParseError.unknownOption("ifcae=eth0", scheme: "udp", known: ["iface"])) {
            try SourceURL(parsing: "udp://:5600?ifcae=eth0")
        }
        #expect(throws: SourceURL.ParseError.unknownOption("lsten", scheme: "tcp", known: ["listen"])) {
            try SourceURL(parsing: "tcp://:9000?lsten&pid=300")
        }
        let line = "\(SourceURL.ParseError.unknownOption("ifcae=eth0", scheme: "udp", known: ["iface"]))"
        #expect(line.contains("did you mean iface?") && line.contains("?iface, ?program, ?pid"), "\(line)")
    }

    @Test(arguments: [(MPEGTSSelection(), 0), (MPEGTSSelection(program: 2), 1), (MPEGTSSelection(pid: 257), 1),
                      (MPEGTSSelection(program: 1, pid: 256), 0)])
    func theChosenProgramPlaysBitExact(selection: MPEGTSSelection, video: Int) throws {
        let ts = try Self.twoPrograms()
        let r = try Harness.decodeFile(ts) { $0.mpegtsSelection = selection }
        let expected = try Self.expected(ts, video: video)
        try #require(expected.count > 20)
        #expect(r.hashes == expected, "\(selection)")
    }

    @Test func anAbsentProgramOrPIDIsAOneLineErrorListingWhatIs() throws {
        let ts = try Self.twoPrograms()
        let cases = [("?program=7", "MPEG-TS: program 7 is not in the PAT; it lists programs 1, 2"),
                     ("?pid=300", "MPEG-TS: no H.264/H.265 stream on PID 300 in the PMTs; program 1: PID 256 H.264; program 2: PID 257 H.264"),
                     ("?program=1&pid=257", "MPEG-TS: no H.264/H.265 stream on PID 257 in the PMT; program 1: PID 256 H.264")]
        for (query, line) in cases {
            let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", ts + query, "--display", "none", "--untimed"])
            #expect(rc != 0 && err.contains("\(ts): \(line)"), "\(query): \(err)")
        }
        let md5 = ts + ".md5"
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", ts + "?program=2", "--display", "none", "--untimed", "--framemd5", md5])
        #expect(rc == 0, "\(err)")
        #expect(Fixtures.parseFrameMD5(try String(contentsOfFile: md5, encoding: .utf8)) == (try Self.expected(ts, video: 1)), "the URL reaches the demultiplexer")
    }
}
