import Glibc
import SpyglassFeed
import SpyglassIngest
import SpyglassTransport

/// One run of `spyglass send`: a test pattern or a recorded file, sent to a destination until
/// it ends, its duration passes or a stop signal (SIGINT/SIGTERM; a second one exits at once).
///
/// The executable parses the arguments into this value; what it means to send lives here.
public struct SendRun {
    /// What is sent.
    public var input: LiveSender.Input
    /// Where: `udp://HOST:PORT`, `tcp://`, `srt://` (SRT always carries MPEG-TS).
    public var destination: SourceURL
    /// More `udp://` destinations that get every datagram as well (``StreamSender/alsoSend(to:)``);
    /// RTCP sender reports go to the first destination only.
    public var alsoTo: [SourceURL] = []
    /// Largest datagram payload, bytes.
    public var mtu = 1400
    /// Stamp each picture's capture time (MISB ST 0604 SEI).
    public var stamp = false
    /// Added to the stamped capture times, µs (to test the receiver's clock-offset rules).
    public var clockOffsetMicros: Int64 = 0
    /// RTP (RFC 6184/7798) instead of raw Annex B; UDP only.
    public var rtp = false
    /// MPEG-TS (ISO/IEC 13818-1) instead of raw Annex B.
    public var mpegts = false
    /// MISB ST 0601 KLV with each picture; MPEG-TS only.
    public var klv: PlatformMetadata?
    /// Stop after this long, seconds; nil = until the input ends (a pattern: never).
    public var durationSeconds: Double?

    public init(input: LiveSender.Input, destination: SourceURL) {
        self.input = input
        self.destination = destination
    }

    /// Sends until done, logging what is sent and the closing line.
    /// - Returns: the exit code: 0 when the input was sent, 1 when the options do not go
    ///   together (`--klv` without MPEG-TS, `--rtp` to a stream destination or with `--mpegts`:
    ///   checked before connecting), the destination cannot be reached, nothing at all could be
    ///   sent, or the input cannot be read (each said in one line).
    public func run() -> Int32 {
        if case .udp(nil, let port, _) = destination {
            Log.info("udp://:\(port) names no host: sending to 127.0.0.1:\(port) (udp://HOST:\(port) sends to another machine)")
        }
        // The options are checked before anything connects.
        let toUDP: Bool
        if case .udp = destination { toUDP = true } else { toUDP = false }
        if klv != nil && !(mpegts || destination.isSRT) { Log.error("--klv needs --mpegts"); return 1 }
        if rtp && !toUDP { Log.error("--rtp needs a udp:// destination"); return 1 }
        if rtp && mpegts { Log.error("--rtp and --mpegts: choose one (RTP carries the H.264/H.265 payload itself)"); return 1 }
        let sender: StreamSender
        do {
            sender = try StreamSender(destination: destination, mtu: mtu)
            for d in alsoTo { try sender.alsoSend(to: d) }
        } catch { Log.error("\(error)"); return 1 }
        let to = ([destination] + alsoTo).map(\.description).joined(separator: " and ")
        let live = LiveSender(input: input, sender: sender)
        live.stamp = stamp
        live.clockOffsetMicros = clockOffsetMicros
        live.rtp = rtp
        live.mpegts = mpegts || destination.isSRT
        live.klv = klv
        live.durationSeconds = durationSeconds
        VideoDecoder.setLibraryLogging(verbose: false)   // no libx264 statistics block on exit
        let stop = live.stop
        StopSignals.onSignal { sig, count in
            if count > 1 { _exit(128 + sig) }
            stop.set()
        }
        switch input {
        case .pattern(let s):
            Log.info("sending \(s.codec.displayName) \(s.width)x\(s.height)@\(s.fps) \(s.bitrate / 1000) kbit/s test pattern to \(to)")
        case .file(let path, _, _):
            Log.info("sending \(path) to \(to)")
        }
        do { try live.run() } catch { Log.error("\(error)"); return 1 }
        sender.finish()
        Log.info(live.closingLine(sender, destination: destination, pattern: input.isPattern))
        if sender.sendErrors > 0 && sender.datagramsSent == 0 {
            Log.error("\(destination): nothing could be sent (\(sender.sendErrors) sends failed)")
            return 1
        }
        return 0
    }
}

extension SendRun {
    /// A file `send` can read whole: readable and regular (a device or a pipe never ends), and raw
    /// Annex B rather than MPEG-TS (ISO/IEC 13818-1 packets, 0x47 every 188 or 192 bytes). Says why
    /// not in one line on stderr.
    public static func sendableFile(_ path: String) -> Bool {
        guard access(path, R_OK) == 0 else { Log.error("\(path): \(String(cString: strerror(errno)))"); return false }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            Log.error("\(path): not a regular file (send reads a raw .h264/.h265 file, or sends a pattern)")
            return false
        }
        // MPEG-TS (188-byte packets, or 192 with an arrival stamp before each) is not Annex B:
        // sent as is, every picture came out concealed.
        if looksLikeMPEGTS(head(of: path, bytes: 400)) {
            Log.error("\(path): an MPEG-TS file; send reads raw Annex B: take the video out first "
                      + "(ffmpeg -i \(path) -c:v copy -an OUT.h264), or send it with --mpegts from that")
            return false
        }
        return true
    }

    /// Sync bytes (0x47) at 0 and 188 or 192 (an arrival stamp before each packet), from byte 0 or 4.
    private static func looksLikeMPEGTS(_ b: [UInt8]) -> Bool {
        for o in [0, 4] where b.count > o + 2 * 192 && b[o] == 0x47 {
            if b[o + 188] == 0x47 || b[o + 192] == 0x47 { return true }
        }
        return false
    }

    /// Up to `bytes` from the start of the file (fewer when it is shorter or unreadable).
    private static func head(of path: String, bytes: Int) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var b = [UInt8](repeating: 0, count: bytes)
        let n = read(fd, &b, bytes)
        return Array(b.prefix(max(0, n)))
    }
}
