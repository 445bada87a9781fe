import Foundation
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport

/// Paths and reference data for tests: captures in the repository, ffmpeg as ground truth.
enum Fixtures {
    /// The package root (…/Tests/SpyglassCoreTests/Support/Fixtures.swift → root).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file under `captures/`.
    static func capture(_ name: String) -> String { root.appendingPathComponent("captures/\(name)").path }

    /// The built `spyglass` executable (swift test builds it next to the test bundle).
    static var spyglassBinary: String {
        let candidates = [
            Bundle.main.bundleURL.appendingPathComponent("spyglass").path,
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("spyglass").path,
            root.appendingPathComponent(".build/debug/spyglass").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }

    /// Starts `process` with no signal blocked, as a child of a program's main thread would be.
    ///
    /// Swift Testing runs tests on dispatch worker threads, which block most signals (SIGINT and
    /// SIGTERM among them), and `Process` hands the starting thread's signal mask on to the child:
    /// its `interrupt()` and `terminate()` would then never reach it. (XCTest ran tests on the main
    /// thread, where nothing is blocked.) So the child is started from a thread of its own that
    /// unblocks every signal first. Every child a test starts goes through here.
    static func launch(_ process: Process) throws {
        let failure = Locked<(any Error)?>(nil)
        let started = DispatchSemaphore(value: 0)
        Thread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            do { try process.run() } catch { failure.set(error) }
            started.signal()
        }.start()
        started.wait()
        if let error = failure.get() { throw error }
    }

    /// Runs a program; returns (exit status, stdout, stderr). Fails the test if it cannot start.
    ///
    /// stdout and stderr are read at the same time, on their own threads, while stdin is written:
    /// a child that fills one pipe while the test waits on another would otherwise hang both.
    /// A child still running after `timeoutSeconds` is killed and reported (never a hang).
    @discardableResult
    static func run(_ path: String, _ args: [String], stdin: Data? = nil, environment: [String: String]? = nil,
                    timeoutSeconds: Double = 300) throws -> (Int32, String, String) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw NSError(domain: "Fixtures.run", code: 127, userInfo: [NSLocalizedDescriptionKey:
                "\(path) is not installed or not executable (tools/setup installs what the tests need)"])
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        if let environment { p.environment = environment }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let inPipe = Pipe()
        p.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
        let exited = DispatchSemaphore(value: 0)
        p.terminationHandler = { _ in exited.signal() }
        try launch(p)
        let outData = Locked(Data()), errData = Locked(Data())
        let readers = DispatchGroup()
        for (pipe, box) in [(out, outData), (err, errData)] {
            readers.enter()
            Thread {
                box.set(pipe.fileHandleForReading.readDataToEndOfFile())
                readers.leave()
            }.start()
        }
        if let stdin {
            // A child that exits before reading all of its input must not kill the test with SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            // Random-sized writes, like a camera pipe.
            var rng = SeededRandom(seed: 7)
            var off = 0
            while off < stdin.count {
                let n = min(stdin.count - off, rng.next(in: 1...4096))
                do { try inPipe.fileHandleForWriting.write(contentsOf: stdin.subdata(in: off..<off + n)) } catch { break }
                off += n
            }
            try? inPipe.fileHandleForWriting.close()
        }
        if exited.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            p.terminate()
            if exited.wait(timeout: .now() + 2) == .timedOut { kill(p.processIdentifier, SIGKILL); exited.wait() }
            throw NSError(domain: "Fixtures.run", code: 124, userInfo: [NSLocalizedDescriptionKey:
                "\(path) \(args.joined(separator: " ")) did not exit within \(Int(timeoutSeconds)) s: killed"])
        }
        p.waitUntilExit()
        // The pipes close when the child exits (unless a process it started keeps them open).
        if readers.wait(timeout: .now() + 30) == .timedOut {
            throw NSError(domain: "Fixtures.run", code: 125, userInfo: [NSLocalizedDescriptionKey:
                "\(path) exited but its stdout/stderr stayed open 30 s (a process it started holds them)"])
        }
        return (p.terminationStatus, String(decoding: outData.get(), as: UTF8.self), String(decoding: errData.get(), as: UTF8.self))
    }

    /// True when some socket is bound to UDP `port` on this machine (read from /proc/net/udp and
    /// udp6, so asking does not take the port from the process that is about to bind it).
    static func udpPortIsBound(_ port: UInt16) -> Bool {
        let hex = String(format: ":%04X", port)
        for table in ["/proc/net/udp", "/proc/net/udp6"] {
            // Read to the end: String(contentsOfFile:) stops after the first page of a /proc file
            // (about 30 sockets), and a full test run has more open than that.
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            try? handle.close()
            for line in text.split(separator: "\n").dropFirst() {
                let cols = line.split(separator: " ", omittingEmptySubsequences: true)
                if cols.count > 1 && cols[1].hasSuffix(hex) { return true }
            }
        }
        return false
    }

    /// True when a TCP socket listens on `port` (state 0A in /proc/net/tcp and tcp6).
    static func tcpPortIsListening(_ port: UInt16) -> Bool {
        let hex = String(format: ":%04X", port)
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            try? handle.close()
            for line in text.split(separator: "\n").dropFirst() {
                let cols = line.split(separator: " ", omittingEmptySubsequences: true)
                if cols.count > 3 && cols[1].hasSuffix(hex) && cols[3] == "0A" { return true }
            }
        }
        return false
    }

    /// A child started in the background; its stderr goes to a file (it can never fill a pipe).
    final class Child: Sendable {
        let process: Process
        let errPath: String
        init(process: Process, errPath: String) { self.process = process; self.errPath = errPath }
        /// Waits for the exit (at most `timeoutSeconds`, then kills it). Returns status and stderr.
        func wait(timeoutSeconds: Double = 60) -> (Int32, String) {
            let deadline = Date().addingTimeInterval(timeoutSeconds)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
            let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            return (process.terminationStatus, err)
        }
    }

    /// Starts a program in the background, stdout discarded, stderr to a temporary file.
    /// - Parameter environment: variables set for the child on top of this process's own.
    static func start(_ path: String, _ args: [String], environment: [String: String] = [:]) throws -> Child {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw NSError(domain: "Fixtures.start", code: 127, userInfo: [NSLocalizedDescriptionKey:
                "\(path) is not installed (tools/setup installs what the tests need)"])
        }
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err").path
        guard FileManager.default.createFile(atPath: errPath, contents: nil) else {
            throw NSError(domain: "Fixtures.start", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot create \(errPath)"])
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        p.standardError = FileHandle(forWritingAtPath: errPath)
        try launch(p)
        return Child(process: p, errPath: errPath)
    }

    /// One framemd5 line's checked columns.
    struct FrameHash: Equatable, CustomStringConvertible {
        var size: Int
        var md5: String
        var description: String { "\(size) \(md5)" }
    }

    /// `ffmpeg -f framemd5` of a file: the ground truth for decoded pictures.
    /// `-autoscale 0` keeps each frame at its own size across resolution changes.
    static func ffmpegFrameMD5(_ path: String) throws -> [FrameHash] {
        let (rc, out, err) = try run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-fps_mode", "passthrough",
                                                         "-autoscale", "0", "-f", "framemd5", "-"])
        guard rc == 0 else { throw NSError(domain: "ffmpeg", code: Int(rc), userInfo: [NSLocalizedDescriptionKey: err]) }
        return parseFrameMD5(out)
    }

    /// The size and hash columns of framemd5 text.
    static func parseFrameMD5(_ text: String) -> [FrameHash] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let cols = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cols.count >= 6, let size = Int(cols[4]) else { return nil }
            return FrameHash(size: size, md5: cols[5])
        }
    }

    /// Reads a whole file.
    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Frame dimensions ffprobe reports for every frame, in order.
    static func ffprobeFrameSizes(_ path: String) throws -> [String] {
        let (_, out, _) = try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                       "frame=width,height", "-of", "csv=p=0", path])
        return out.split(separator: "\n").map { line in
            let cols = line.split(separator: ",", omittingEmptySubsequences: true)
            return cols.count >= 2 ? "\(cols[0])x\(cols[1])" : String(line)
        }
    }
}
