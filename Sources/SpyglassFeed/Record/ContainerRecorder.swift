import Foundation
import SpyglassTransport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import SpyglassBitstream
import SpyglassPipeline
import SpyglassIngest

/// The flight recorder into a container that every player opens, muxed by libavformat (no muxer
/// of our own): Matroska (`.mkv`, and any name without a known extension), MPEG-TS (`.ts`) or
/// fragmented MP4 (`.mp4`).
///
/// **Timing.** Each access unit's time stamp is its capture time where the stream carries one
/// (ST 0604 SEI, RTCP, RTP header extension, KLV), else the wall-clock arrival of its last byte:
/// a stream that pauses or changes rate plays back as it arrived, and no frame rate is assumed.
/// Time stamps go in µs from the file's first access unit, never backwards (a stamp that would
/// go back is put 1 µs after the one before). The file's start (wall clock, UTC) is its
/// `creation_time` (Matroska `DateUTC`, MP4 `mvhd`).
///
/// **Crash safety.** Matroska clusters last at most 1 s (`cluster_time_limit`) and carry CRC-32
/// (libavformat's default); each closed cluster goes to the kernel at once (`flush_packets`), so
/// a `kill -9` loses at most the cluster in progress, about a second. MPEG-TS loses only what
/// was not yet flushed (each packet is flushed). MP4 is fragmented
/// (`frag_keyframe+empty_moov+default_base_moof`, and at most 1 s a fragment), since a plain MP4
/// written live is unreadable without its end. A thread of the recorder's own calls `fsync(2)`
/// on the file once a second (``syncCount``, ``syncMillisMax``): what a power loss keeps, and the
/// feed's thread never waits on the disk. The last access unit is held back until the next one
/// comes (or the file closes), so that a repair (``replace(_:store:wallMicros:)``) can still
/// put the whole version in its place: the file never holds a cut version.
///
/// Writing never stops live viewing: on an error the recorder stops, reports once with how much
/// was kept, and the receiver goes on.
public final class ContainerRecorder: FlightRecorder {
    let container: ContainerWriter.Container
    /// The file name `--record` gave, with its container's extension.
    public let basePath: String
    /// Rotate at the next keyframe after this many bytes (0: never).
    public let splitBytes: Int
    /// Rotate at the next keyframe after this many µs of arrival time (0: never).
    public let splitMicros: UInt64
    /// Access units written (held back: not yet).
    public private(set) var accessUnits = 0
    /// Bytes of video written.
    public private(set) var bytes = 0
    /// Every file started (rotation makes several).
    public private(set) var files: [String] = []
    /// Access units that a repair replaced before they were written.
    public private(set) var rewritten = 0
    /// The first error; recording stopped there.
    public private(set) var error: String?
    /// Times the file was synced to the disk (on the sync thread).
    public var syncCount: Int { syncer.state.withLock { $0.count } }
    /// The longest of those syncs, ms.
    public var syncMillisMax: Double { syncer.state.withLock { $0.maxMillis } }
    /// How often the file was synced, for the summary line ("" before the first sync).
    public var detail: String {
        syncCount == 0 ? "" : String(format: "; synced to the disk %d times, the longest %.1f ms (off the feed's thread)", syncCount, syncMillisMax)
    }

    private var writer: ContainerWriter?
    /// The newest KLV position ("47.397700, 8.545600, 500 m, heading 90.0°") and when it came,
    /// wall µs: in the captions while it is at most 2 s older than the picture.
    private var position: (text: String, wallMicros: UInt64)?
    /// The vehicle's telemetry (`--mavlink`): its state goes into each picture's caption.
    public var telemetry: (any TelemetryFeed)?
    /// The newest KLV local set not yet written to a TS file's KLV stream.
    private var unwrittenKLV: PlatformMetadata?
    /// The codec of the file being written (its track's).
    private var fileCodec: VideoCodec?
    private var pending: (au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64)?
    private var fileStartMicros: UInt64 = 0
    private var firstStamp: UInt64?
    private var captureMinusWall: Int64?
    private let syncer = FileSyncer()

    /// A recorder that opens its first file with the first random-access access unit.
    /// - Parameters:
    ///   - path: the recording's name; `.mkv` is added unless it ends in `.mkv`, `.ts` or `.mp4`.
    ///   - splitBytes/splitMicros: rotation (`--record-split-mb`/`-min`); each file starts at a
    ///     keyframe with its parameter sets, named `NAME-000.mkv`, `NAME-001.mkv`, ….
    public init(path: String, splitBytes: Int = 0, splitMicros: UInt64 = 0) {
        container = ContainerWriter.Container(rawValue: FilePath.fileExtension(path)) ?? .matroska
        basePath = Self.fileName(for: path)
        self.splitBytes = splitBytes
        self.splitMicros = splitMicros
        let syncer = self.syncer
        Thread.detachNewThread { syncer.run() }
    }

    deinit { close() }

    /// The file `path` names: itself with `.mkv`, `.ts` or `.mp4`, else with `.mkv` added.
    public static func fileName(for path: String) -> String {
        ContainerWriter.Container(rawValue: FilePath.fileExtension(path)) == nil ? path + ".mkv" : path
    }

    @discardableResult
    public func record(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        guard error == nil else { return false }
        if let p = pending {
            guard write(p.au, store: p.store, wallMicros: p.wallMicros) else { return false }
        }
        pending = (au, store, wallMicros)
        return true
    }

    @discardableResult
    public func replace(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        guard error == nil else { return false }
        guard let p = pending, p.au.index == au.index, p.au.firstByteMicros == au.firstByteMicros else { return true }
        pending = (au, store, wallMicros)
        rewritten += 1
        return true
    }

    public func close() {
        if let p = pending, error == nil { _ = write(p.au, store: p.store, wallMicros: p.wallMicros) }
        pending = nil
        if error == nil { _ = finishFile() }
        closeFile()
        syncer.state.withLock { $0.stop = true }
    }

    /// Muxes one access unit, opening (or rotating to) a file at a random access point, with its
    /// caption (``caption(_:wallMicros:)``) and KLV, once ``PresentationStamper`` has stamped it.
    private func write(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        let startsClean = au.isRandomAccessPoint || au.recoveryFrameCount != nil
        if writer != nil && startsClean && needsRotation(au) {
            guard finishFile() else { return false }
            closeFile()
        }
        if writer != nil && au.codec != fileCodec {
            // A container's track has one codec: a sender that changed codec goes on in a new file.
            Log.info("the stream changed from \(fileCodec.map { "\($0)" } ?? "?") to \(au.codec): recording goes on in a new file")
            guard finishFile() else { return false }
            closeFile()
        }
        if writer == nil {
            // A file starts at a picture a decoder can start from; the first may start anywhere
            // once the parameter sets are known (nothing received is left out).
            guard startsClean || (files.isEmpty && store.latestFormat != nil) else { return true }
            guard openFile(au, store: store, wallMicros: wallMicros) else { return false }
        }
        let data = au.annexB(prefix: au.hasParameterSets ? [] : (accessUnitsInFile == 0 ? store.allUnits : []))
        // MPEG-TS: the KLV local set again, with the picture it came with.
        let klv = unwrittenKLV.map { UASLocalSet.encode($0) }
        unwrittenKLV = nil
        stamper.declare(reorderDepth: PictureOrderCounter.reorderDepth(of: au, store: store))
        let picture = Picture(data: data, keyframe: au.isRandomAccessPoint, caption: caption(au, wallMicros: wallMicros), klv: klv)
        let stamped = stamper.push(picture, order: pictureOrder.order(of: au, store: store),
                                   sourceMicros: stamp(au, wallMicros: wallMicros), atCapture: au.captureWallMicros != nil)
        accessUnits += 1
        accessUnitsInFile += 1
        bytes += data.count
        return mux(stamped, final: false)
    }
    private var accessUnitsInFile = 0

    /// An access unit waiting in ``stamper`` for its time stamps, with what goes beside it.
    struct Picture {
        let data: [UInt8]
        let keyframe: Bool
        let caption: String
        let klv: [UInt8]?
    }
    private var stamper = PresentationStamper<Picture>(reorderDepth: 0)
    private var pictureOrder = PictureOrderCounter()
    /// The newest caption in output order, written when the next picture's pts ends it.
    private var heldCaption: (text: String, pts: Int64)?

    /// Writes stamped access units (decode order) and the captions of the pictures now in
    /// output order, each lasting until the next one's pts (at most a second); `final` writes the
    /// last caption too, for a frame interval.
    private func mux(_ stamped: [PresentationStamper<Picture>.Stamped], final: Bool) -> Bool {
        guard let writer else { return false }
        do {
            for s in stamped {
                try writer.write(s.payload.data, ptsMicros: s.pts, dtsMicros: s.dts, keyframe: s.payload.keyframe)
                if let klv = s.payload.klv { try writer.writeKLV(klv, micros: s.dts) }
            }
            for p in stamper.takePresented() {
                if let held = heldCaption {
                    try writer.writeCaption(held.text, micros: held.pts, durationMicros: min(max(p.pts - held.pts, 1), 1_000_000))
                }
                heldCaption = (p.payload.caption, p.pts)
            }
            if final, let held = heldCaption {
                try writer.writeCaption(held.text, micros: held.pts, durationMicros: 33_333)
                heldCaption = nil
            }
        } catch {
            return fail("\(error)")
        }
        return true
    }

    /// Stamps and writes what the stamper still holds: the file is about to close.
    private func finishFile() -> Bool {
        guard writer != nil else { return true }
        return mux(stamper.flush(), final: true)
    }

    /// The picture's caption: its capture time (else its arrival), UTC to the millisecond, how
    /// long it took from capture to arrival where the stream says when it was captured, and the
    /// platform's KLV position and the vehicle's MAVLink state while fresh (``TelemetryCaption``)
    /// (`2026-12-04 20:31:05.123 UTC · capture to arrival 34 ms · 47.397700, 8.545600, 500 m, heading 90.0°`).
    func caption(_ au: AccessUnit, wallMicros: UInt64) -> String {
        let fresh = position.flatMap { p in wallMicros <= p.wallMicros + 2_000_000 && p.wallMicros <= wallMicros + 2_000_000 ? p.text : nil }
        let vehicle = telemetry.flatMap { feed in
            let (state, now) = feed.telemetry(forPictureAt: nil)
            return TelemetryCaption.text(state, nowMicros: now)
        }
        let where_ = [fresh, vehicle].compactMap { $0 }
        return ContainerWriter.caption(captureWallMicros: au.captureWallMicros, arrivalWallMicros: wallMicros,
                                       position: where_.isEmpty ? nil : where_.joined(separator: " · "))
    }

    public func note(_ metadata: PlatformMetadata) {
        if let text = metadata.positionText { position = (text, MonotonicClock.wallMicros()) }
        unwrittenKLV = metadata
    }

    /// The access unit's source time, µs from the file's first: its capture time, else its
    /// arrival shifted by the last capture-to-arrival difference seen (so a stream that only
    /// sometimes carries capture times does not jump between clocks), never before the first
    /// (``PresentationStamper`` puts them in order).
    private func stamp(_ au: AccessUnit, wallMicros: UInt64) -> Int64 {
        var t: UInt64
        if let c = au.captureWallMicros {
            t = c
            captureMinusWall = Int64(bitPattern: c &- wallMicros)
        } else if let d = captureMinusWall {
            t = UInt64(bitPattern: Int64(bitPattern: wallMicros) &+ d)
        } else {
            t = wallMicros
        }
        let first = firstStamp ?? t
        firstStamp = first
        return Int64(max(t, first) - first)
    }

    private func needsRotation(_ au: AccessUnit) -> Bool {
        (splitBytes > 0 && bytesInFile >= splitBytes) || (splitMicros > 0 && au.firstByteMicros >= fileStartMicros + splitMicros)
    }
    private var bytesInFile: Int { bytes - bytesBeforeFile }
    private var bytesBeforeFile = 0

    /// The next file's name: `NAME.mkv`; with rotation, or after a codec change, `NAME-000.mkv`,
    /// `NAME-001.mkv`, … (the first file of an unsplit recording keeps the plain name).
    private func fileName() -> String {
        guard splitBytes > 0 || splitMicros > 0 || !files.isEmpty else { return basePath }
        let ext = "." + container.rawValue
        return String(basePath.dropLast(ext.count)) + String(format: "-%03d", files.count) + ext
    }

    private func openFile(_ au: AccessUnit, store: ParameterSetStore, wallMicros: UInt64) -> Bool {
        let name = fileName()
        do {
            writer = try ContainerWriter(path: name, container: container, codec: au.codec, width: store.latestFormat?.width ?? 0,
                                         height: store.latestFormat?.height ?? 0, parameterSets: store.allUnits,
                                         startWallMicros: au.captureWallMicros ?? wallMicros,   // the first picture's time
                                         withKLV: unwrittenKLV != nil || position != nil)
        } catch { return fail("\(error)") }
        files.append(name)
        fileCodec = au.codec
        fileStartMicros = au.firstByteMicros
        firstStamp = nil
        stamper = PresentationStamper(reorderDepth: PictureOrderCounter.reorderDepth(of: au, store: store))
        pictureOrder = PictureOrderCounter()
        heldCaption = nil
        accessUnitsInFile = 0
        bytesBeforeFile = bytes
        let fd = open(name, O_RDONLY | O_CLOEXEC)
        syncer.state.withLock { if $0.fd >= 0 { Glibc.close($0.fd) }; $0.fd = fd }
        Log.info("recording to \(name) (\(container.name), time stamps from \(au.captureWallMicros != nil ? "the capture times" : "arrival"))")
        return true
    }

    private func closeFile() {
        syncer.state.withLock { if $0.fd >= 0 { Glibc.close($0.fd) }; $0.fd = -1 }
        writer?.close(complete: error == nil)
        writer = nil
    }

    private func fail(_ why: String) -> Bool {
        error = why
        // libavformat holds up to a cluster (a second) before it writes: what reached the file is
        // not known exactly here, so no count is claimed for it.
        Log.error("recording stopped: \(why); \(accessUnits) access units were muxed, and "
                  + (files.isEmpty ? "no file was started" : files.joined(separator: ", ") + " keeps those that reached the disk (up to a second fewer)"))
        closeFile()
        return false
    }



}

/// Once a second, `fsync(2)` on the recording being written, through a descriptor of its own
/// (``ContainerRecorder``): closed clusters reach the disk, and the feed's thread never waits
/// for it. Stops when told.
final class FileSyncer: Sendable {
    /// The file's descriptor (-1: none now), syncs done, the longest (ms), and whether to stop.
    let state = Mutex<(fd: Int32, count: Int, maxMillis: Double, stop: Bool)>((-1, 0, 0, false))

    func run() {
        while true {
            usleep(1_000_000)
            // The descriptor is used under the lock, so that the recorder cannot close it meanwhile.
            let stop = state.withLock { s -> Bool in
                guard !s.stop else { return true }
                guard s.fd >= 0 else { return false }
                let t0 = MonotonicClock.nowMicros()
                fsync(s.fd)
                s.count += 1
                s.maxMillis = max(s.maxMillis, Double(MonotonicClock.nowMicros() - t0) / 1000)
                return false
            }
            if stop { return }
        }
    }
}
