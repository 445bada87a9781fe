import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// Ctrl-C: the first stops every feed cleanly; a second exits at once, even when a feed is
/// stuck writing to a FIFO nobody reads.
@Suite struct InterruptTests {
    @Test func aSecondInterruptEndsAPlayBlockedOnAFullFIFO() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("interrupt-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // 2000 tiny pictures: their framemd5 lines (about 150 KB) overfill a 64 KiB pipe.
        let clip = "\(dir)/many.h264"
        let (erc, _, eerr) = try Fixtures.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x64:rate=30",
                                                                  "-frames:v", "2000", "-c:v", "libx264", "-preset", "ultrafast", clip])
        try #require(erc == 0, "\(eerr)")
        let fifo = "\(dir)/md5.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        // A reader that holds the FIFO open and never reads.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let child = try Fixtures.start(Fixtures.spyglassBinary, ["play", clip, "--display", "none", "--untimed", "--framemd5", fifo])
        // The feed is stuck once the pipe is full and one of its threads sleeps in write(2) on it
        // (the kernel says so in /proc: a full pipe alone left a moment in which the first
        // interrupt could still stop the feed cleanly, between two writes).
        let pid = child.process.processIdentifier
        #expect(Wait.until(timeoutSeconds: 60) {
            var waiting: Int32 = 0
            return ioctl(reader, UInt(FIONREAD), &waiting) == 0 && waiting >= 60_000 && Self.aThreadSleepsInPipeWrite(pid)
        }, "the FIFO fills and the feed blocks writing to it")
        // The first interrupt cannot end it (the feed is stuck in write(2)); the second does.
        // (Sent once the first was taken: two pending SIGINTs are one to the kernel.)
        kill(child.process.processIdentifier, SIGINT)
        #expect(Wait.until(timeoutSeconds: 30) {
            ((try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? "").contains("interrupt again to exit at once")
        })
        kill(child.process.processIdentifier, SIGINT)
        let (status, err) = child.wait(timeoutSeconds: 60)
        #expect(!err.isEmpty)
        #expect(status == 128 + SIGINT, "the second interrupt exits at once: \(err)")
        #expect(err.contains("second interrupt"), "\(err)")
    }

    /// True when a thread of process `pid` sleeps writing to a pipe (`/proc/PID/task/TID/wchan`).
    static func aThreadSleepsInPipeWrite(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { tid in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/wchan", encoding: .utf8)) ?? "").contains("pipe_write")
        }
    }
}
