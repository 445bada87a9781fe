import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// Every SIGINT and SIGTERM stops `play`, whichever of its threads the kernel hands it to: the
/// main thread drawing a wall, a feed's thread in `ppoll`, any other. (libdispatch's signal
/// sources, used before, lost a signal that reached a thread where it was not blocked: 2 in 60
/// quick start/stop cycles of a wall never stopped, issue 17.)
@Suite(.serialized) struct StopSignalTests {
    /// A four-feed wall in a real SDL window (SDL's dummy video driver: no X server needed),
    /// three feeds of the default capture and one UDP feed with no sender.
    private func startWall(summary: String) throws -> Fixtures.Child {
        let clip = Fixtures.capture("default-720p30.h264")
        return try Fixtures.start(Fixtures.spyglassBinary, ["play", clip, clip, clip, "udp://127.0.0.1:\(try Sender.freeUDPPort())",
                                                            "--summary", summary], environment: ["SDL_VIDEODRIVER": "dummy"])
    }

    /// Thread ids of `pid` and their names (`/proc/PID/task/TID/comm`).
    private static func threads(_ pid: Int32) -> [(tid: Int32, name: String)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { t in
            guard let tid = Int32(t) else { return nil }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(t)/comm", encoding: .utf8)) ?? ""
            return (tid, name.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Sends `sig` to one thread of another process (tgkill(2), through glibc from python3).
    private static func signalThread(_ pid: Int32, _ tid: Int32, _ sig: Int32) throws {
        let (rc, _, err) = try Fixtures.run("/usr/bin/python3", ["-c", "import ctypes,sys; sys.exit(ctypes.CDLL(None).tgkill(\(pid), \(tid), \(sig)))"])
        try #require(rc == 0, "tgkill: \(err)")
    }

    @Test(arguments: [("spyglass", SIGINT), ("feed 1", SIGINT), ("feed 4", SIGTERM)])
    func aStopSignalToAnyThreadStopsAWallWithEverySummary(thread: String, sig: Int32) throws {
        let summary = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(getpid())-\(UUID().uuidString)-{n}.json").path
        let child = try startWall(summary: summary)
        let pid = child.process.processIdentifier
        #expect(Wait.until(timeoutSeconds: 60) {
            ((try? String(contentsOfFile: child.errPath, encoding: .utf8)) ?? "").contains("wall open")
                && Self.threads(pid).contains { $0.name == thread }
        }, "the wall opened and its thread '\(thread)' runs")
        let target = try #require(Self.threads(pid).first { $0.name == thread })
        try Self.signalThread(pid, target.tid, sig)
        let (status, err) = child.wait(timeoutSeconds: 30)
        #expect(!child.process.isRunning)
        #expect(status == 0, "stopped cleanly: \(err)")
        #expect(err.contains("stopping"), "\(err)")
        for n in 1...4 {
            let path = summary.replacingOccurrences(of: "{n}", with: String(n))
            #expect(((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()).count > 0, "feed \(n)'s summary is written")
            unlink(path)
        }
    }

    @Test func aSignalBeforeTheSourcesAreOpenEndsPlayAtOnce() throws {
        // An SRT call to a port nobody listens on takes its whole connect timeout to fail.
        let child = try Fixtures.start(Fixtures.spyglassBinary, ["play", "srt://127.0.0.1:\(try Sender.freeUDPPort())", "--display", "none"])
        let pid = child.process.processIdentifier
        #expect(Wait.until(timeoutSeconds: 30) { Self.threads(pid).contains { $0.name == "stop signals" } })
        kill(pid, SIGTERM)
        let (status, err) = child.wait(timeoutSeconds: 30)
        #expect(status == 128 + SIGTERM, "\(err)")
        // The signal may come while the sources open, or still before (while the command starts).
        #expect(err.contains("interrupted while opening") || err.contains("interrupted while starting"), "\(err)")
    }
}
