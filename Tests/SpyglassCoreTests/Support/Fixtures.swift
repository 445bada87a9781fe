import Foundation
import XCTest
@testable import SpyglassCore

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

    /// Runs a program; returns (exit status, stdout, stderr). Fails the test if it cannot start.
    @discardableResult
    static func run(_ path: String, _ args: [String], stdin: Data? = nil, environment: [String: String]? = nil) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        if let environment { p.environment = environment }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let inPipe = Pipe()
        p.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
        try p.run()
        if let stdin {
            // Random-sized writes, like a camera pipe.
            var rng = SeededRandom(seed: 7)
            var off = 0
            while off < stdin.count {
                let n = min(stdin.count - off, rng.next(in: 1...4096))
                inPipe.fileHandleForWriting.write(stdin.subdata(in: off..<off + n))
                off += n
            }
            try inPipe.fileHandleForWriting.close()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
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
