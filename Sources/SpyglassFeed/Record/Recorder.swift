import Foundation
import SpyglassTransport
#if canImport(Glibc)
import Glibc
import SpyglassBitstream
import SpyglassPipeline
import SpyglassIngest
#endif

/// The flight recorder: every access unit received, as an Annex B file, with a timing index.
///
/// Files: `NAME.h264`/`NAME.h265` (by codec) and `NAME.h264.idx` beside it. Crash safety
/// (`kill -9` at any moment) comes from the write order: for each access unit, first one index
/// line (`offset,size,…`, ending in a newline), then the access unit's bytes, each with one
/// `write(2)`. On open (``RecordingIndex/load(streamPath:)``) a torn last line is dropped, and an
/// entry whose bytes are not all in the stream file is dropped: what remains is exactly the
/// access units completed before the end. Data written with `write(2)` survives the process.
///
/// A repair (a NAL unit an idle flush had cut came whole: ``replace(_:parameterSets:wallMicros:)``)
/// rewrites the access unit written last: the stream file is cut back to where it began, then
/// the index, and it is written again as above. A `kill -9` in that moment loses that one
/// access unit (its old line names bytes no longer in the file and is dropped on open), never
/// one before it; the file never holds the cut version after its whole one.
///
/// Writing never stops live viewing: on an error (disk full, unwritable path) the recorder
/// stops, reports once with how much was kept, and the receiver goes on.
public final class Recorder {
    /// The name given to `--record`.
    public let basePath: String
    /// Rotate after this many bytes (0 = never).
    public let splitBytes: Int
    /// Rotate after this many µs of arrival time (0 = never).
    public let splitMicros: UInt64
    /// The file being written now.
    public private(set) var streamPath: String?
    /// Access units written.
    public private(set) var accessUnits = 0
    /// Bytes written to stream files.
    public private(set) var bytes = 0
    /// Every stream file started (rotation makes several).
    public private(set) var files: [String] = []
    /// Access units rewritten with a repaired NAL unit.
    public private(set) var rewritten = 0
    /// The first error; recording stopped there.
    public private(set) var error: String?
    private var stream: Int32 = -1
    private var index: Int32 = -1
    private var offset = 0
    /// Bytes in the index file.
    private var indexOffset = 0
    /// The access unit written last to this file: its index and where its bytes and line begin.
    private var last: (index: Int, firstByteMicros: UInt64, offset: Int, indexOffset: Int)?
    private var fileStartMicros: UInt64 = 0
    private var codec: VideoCodec?

    /// The index line header, first line of every `.idx` file.
    public static let header = "offset,size,first_byte_us,last_byte_us,wall_us,capture_wall_us,keyframe,recovery_point,damaged\n"

    /// A recorder that opens its first files with the first access unit it records.
    /// - Parameters:
    ///   - path: recording name; the codec's extension is added unless it is already there.
    ///   - splitBytes/splitMicros: rotation; each new file starts with parameter sets and a
    ///     random access point.
    public init(path: String, splitBytes: Int = 0, splitMicros: UInt64 = 0) {
        basePath = path
        self.splitBytes = splitBytes
        self.splitMicros = splitMicros
    }

    deinit { close() }

    /// Records one access unit. `parameterSets` are written first when a new file starts
    /// without them in the access unit (files are self-starting).
    /// - Returns: false once recording has stopped on an error.
    @discardableResult
    public func record(_ au: AccessUnit, parameterSets: [[UInt8]], wallMicros: UInt64) -> Bool {
        guard error == nil else { return false }
        let recovery = au.recoveryFrameCount != nil
        let startsClean = au.isRandomAccessPoint || recovery
        if stream >= 0 && startsClean && needsRotation(au) { closeFiles() }
        if stream < 0 {
            // A new file starts only at a picture a decoder can start from.
            guard startsClean || files.isEmpty else { return true }
            guard openFiles(codec: au.codec) else { return false }
            fileStartMicros = au.firstByteMicros
        }
        return writeEntry(au, parameterSets: parameterSets, wallMicros: wallMicros)
    }

    /// Puts `au` in place of the access unit of the same index written last: a repair put a NAL
    /// unit an idle flush had cut back whole. An access unit not written last (or in an earlier
    /// file) is left as it was.
    /// - Parameters:
    ///   - au: the repaired access unit (``FeedObservers/accessUnitRepaired``).
    ///   - parameterSets: as for ``record(_:parameterSets:wallMicros:)``.
    ///   - wallMicros: wall-clock time of its last byte, µs since the epoch.
    /// - Returns: false once recording has stopped on an error.
    @discardableResult
    public func replace(_ au: AccessUnit, parameterSets: [[UInt8]], wallMicros: UInt64) -> Bool {
        guard error == nil else { return false }
        guard stream >= 0, let last, last.index == au.index, last.firstByteMicros == au.firstByteMicros else { return true }
        // The stream first: until the index is cut too, its last line names bytes no longer there.
        guard ftruncate(stream, off_t(last.offset)) == 0, lseek(stream, off_t(last.offset), SEEK_SET) >= 0,
              ftruncate(index, off_t(last.indexOffset)) == 0, lseek(index, off_t(last.indexOffset), SEEK_SET) >= 0 else {
            fail(errnoText())
            return false
        }
        bytes -= offset - last.offset
        offset = last.offset
        indexOffset = last.indexOffset
        accessUnits -= 1
        rewritten += 1
        return writeEntry(au, parameterSets: parameterSets, wallMicros: wallMicros)
    }

    /// Writes the index line, then the bytes, of one access unit at the end of the files.
    private func writeEntry(_ au: AccessUnit, parameterSets: [[UInt8]], wallMicros: UInt64) -> Bool {
        let recovery = au.recoveryFrameCount != nil
        let data = au.annexB(prefix: au.hasParameterSets ? [] : (offset == 0 ? parameterSets : []))
        let line = Array(("\(offset),\(data.count),\(au.firstByteMicros),\(au.lastByteMicros),\(wallMicros),\(au.captureWallMicros ?? 0),"
            + "\(au.isRandomAccessPoint ? 1 : 0),\(recovery ? 1 : 0),\(au.damaged ? 1 : 0)\n").utf8)
        guard write(index, line), write(stream, data) else {
            fail(errnoText())
            return false
        }
        last = (au.index, au.firstByteMicros, offset, indexOffset)
        offset += data.count
        indexOffset += line.count
        bytes += data.count
        accessUnits += 1
        return true
    }

    private func needsRotation(_ au: AccessUnit) -> Bool {
        (splitBytes > 0 && offset >= splitBytes) || (splitMicros > 0 && au.firstByteMicros >= fileStartMicros + splitMicros)
    }

    private func openFiles(codec: VideoCodec) -> Bool {
        self.codec = codec
        var name = basePath
        let ext = "." + codec.fileExtension
        if !name.hasSuffix(ext) { name += ext }
        if splitBytes > 0 || splitMicros > 0 {
            let stem = String(name.dropLast(ext.count))
            name = stem + String(format: "-%03d", files.count) + ext
        }
        stream = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard stream >= 0 else { fail("\(name): \(errnoText())"); return false }
        index = open(name + ".idx", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard index >= 0, write(index, Array(Self.header.utf8)) else { fail("\(name).idx: \(errnoText())"); return false }
        streamPath = name
        files.append(name)
        Log.info("recording to \(name) (its timing index: \(name).idx)")
        offset = 0
        indexOffset = Self.header.utf8.count
        last = nil
        return true
    }

    /// Writes all of `data`; false (with `errno` set) when a write failed.
    private func write(_ fd: Int32, _ data: [UInt8]) -> Bool {
        writeAll(fd, data) == data.count
    }

    private func fail(_ why: String) {
        error = why
        Log.error("recording stopped: \(why); kept \(accessUnits) access units, \(bytes) bytes"
                  + (files.isEmpty ? "" : " in " + files.joined(separator: ", ")))
        closeFiles()
    }

    private func closeFiles() {
        if stream >= 0 { Glibc.close(stream) }
        if index >= 0 { Glibc.close(index) }
        stream = -1
        index = -1
    }

    /// Closes the files.
    public func close() { closeFiles() }
}

/// A recording's index, read back and repaired.
public struct RecordingIndex: Sendable {
    /// One access unit of a recording.
    public struct Entry: Sendable, Equatable {
        /// Byte offset in the stream file.
        public var offset: Int
        /// Size in bytes (Annex B, start codes included).
        public var size: Int
        /// Monotonic arrival of its first byte when recorded, µs.
        public var firstByteMicros: UInt64
        /// Monotonic arrival of its last byte, µs.
        public var lastByteMicros: UInt64
        /// Wall clock when it was written, µs since the epoch.
        public var wallMicros: UInt64
        /// Capture time from its ST 0604 SEI, µs since the epoch (0 = none).
        public var captureWallMicros: UInt64
        /// IDR / IRAP picture.
        public var keyframe: Bool
        /// Carries a recovery point SEI.
        public var recoveryPoint: Bool
        /// Bytes were lost on the way.
        public var damaged: Bool
    }
    /// Complete access units, in stream order.
    public var entries: [Entry]
    /// Lines dropped: a torn last line, or entries whose bytes are not all in the stream.
    public var repaired: Int

    /// Reads `STREAM.idx` for `streamPath`. Returns nil when there is no index.
    public static func load(streamPath: String) -> RecordingIndex? {
        var st = stat()
        guard stat(streamPath, &st) == 0 else { return nil }
        let streamSize = Int(st.st_size)
        let fd = open(streamPath + ".idx", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            data += buf[0..<n]
        }
        var entries: [Entry] = []
        var repaired = 0
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if let last = lines.last, !last.isEmpty { repaired += 1 }   // no final newline: torn
        lines.removeLast()
        for line in lines.dropFirst() {
            let f = line.split(separator: 0x2C).map { String(decoding: $0, as: UTF8.self) }
            guard f.count == 9, let off = Int(f[0]), let size = Int(f[1]), let a = UInt64(f[2]), let b = UInt64(f[3]),
                  let w = UInt64(f[4]), let c = UInt64(f[5]) else { repaired += 1; continue }
            // Sizes and offsets that cannot be right, bytes not all written, or time going backwards.
            guard off >= 0, size > 0, size <= 1 << 30, off <= streamSize, size <= streamSize - off, b >= a else { repaired += 1; continue }
            if let prev = entries.last, a < prev.firstByteMicros || off < prev.offset + prev.size { repaired += 1; continue }
            entries.append(Entry(offset: off, size: size, firstByteMicros: a, lastByteMicros: b, wallMicros: w,
                                 captureWallMicros: c, keyframe: f[6] == "1", recoveryPoint: f[7] == "1", damaged: f[8] == "1"))
        }
        return RecordingIndex(entries: entries, repaired: repaired)
    }
}

/// What `--record` writes into: the raw stream with its timing index (``Recorder``) or a
/// container (``ContainerRecorder``), each behind a ``QueuedRecorder``. One thread at a time.
public protocol FlightRecorder: AnyObject {
    /// Access units written, bytes written, and every file started (rotation makes several).
    var accessUnits: Int { get }
    var bytes: Int { get }
    var files: [String] { get }
    /// Access units rewritten with a repaired NAL unit.
    var rewritten: Int { get }
    /// The first error; recording stopped there.
    var error: String? { get }
    /// Records one access unit; `store` has the stream's parameter sets (a new file starts with
    /// them) and its format. `wallMicros`: the wall clock of its last byte, µs since the epoch.
    /// - Returns: false once recording has stopped on an error.
    @discardableResult func record(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool
    /// Puts a repaired access unit in place of the one of the same index written last.
    @discardableResult func replace(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool
    /// Closes the files (a container gets its trailer: Cues, duration).
    func close()
    /// What the summary adds after the files (how often the file was synced), or "".
    var detail: String { get }
    /// The platform's position from the stream's KLV (MISB ST 0601), as it arrives: a container's
    /// captions give it with each picture while it is fresh.
    func note(_ metadata: PlatformMetadata)
    /// The vehicle's telemetry for the captions (`--mavlink`), set before the feed starts.
    var telemetry: (any TelemetryFeed)? { get set }
}

extension FlightRecorder {
    /// The raw stream keeps no metadata beside its index (its KLV, if any, is not in it either).
    public func note(_ metadata: PlatformMetadata) {}
    /// The raw stream has no captions; its telemetry is the `.tlog` beside it.
    public var telemetry: (any TelemetryFeed)? { get { nil } set {} }
}

/// The recorder `--record PATH` asks for, by its extension: `.h264`/`.h265` (and `.264`,
/// `.265`, `.hevc`) the raw stream with its index (``Recorder``); `.ts`, `.mp4`, `.mkv` that
/// container; anything else Matroska, with `.mkv` added (``ContainerRecorder``).
public func makeFlightRecorder(path: String, splitBytes: Int = 0, splitMicros: UInt64 = 0) -> any FlightRecorder {
    // On a thread of its own behind a bounded queue: the feed never waits on the disk.
    if recordsRawStream(path) { return QueuedRecorder(Recorder(path: path, splitBytes: splitBytes, splitMicros: splitMicros)) }
    return QueuedRecorder(ContainerRecorder(path: path, splitBytes: splitBytes, splitMicros: splitMicros))
}

/// `--record PATH` writes the raw stream and its index (not a container).
public func recordsRawStream(_ path: String) -> Bool {
    ["h264", "h265", "264", "265", "hevc"].contains(FilePath.fileExtension(path))
}

/// The files `--record PATH` may write, unsplit (for the check that no output is an input).
public func flightRecordingFiles(path: String) -> [String] {
    guard recordsRawStream(path) else { return [ContainerRecorder.fileName(for: path)] }
    return [path, path + ".idx"] + ["h264", "h265"].flatMap { [path + ".\($0)", path + ".\($0).idx"] }
}

extension Recorder: FlightRecorder {
    public var detail: String { "" }

    @discardableResult
    public func record(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        record(au, parameterSets: store.allUnits, wallMicros: wallMicros)
    }

    @discardableResult
    public func replace(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        replace(au, parameterSets: store.allUnits, wallMicros: wallMicros)
    }
}
