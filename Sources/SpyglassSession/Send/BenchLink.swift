import Foundation
import SpyglassBitstream
import SpyglassPipeline
import SpyglassIngest
import SpyglassDisplay

/// The link `spyglass bench` measures across: the receiver's opened source, where the sender
/// sends and how it frames, and the server between them when the transport needs one.
///
/// | transport | sender → | receiver |
/// |---|---|---|
/// | `udp` | raw Annex B over UDP | UDP |
/// | `rtp` | RTP (RFC 6184/7798) over UDP | UDP |
/// | `tcp` | raw Annex B over TCP | TCP listener |
/// | `mpegts` | MPEG-TS over UDP | UDP |
/// | `srt` | MPEG-TS over SRT (libsrt caller) | SRT listener, latency 20 ms |
/// | `rtsp` | RTP over UDP to GStreamer's RTSP server (tools/rtsp-server --relay-rtp) | RTSP client, `--rtsp-transport` udp or tcp |
public struct BenchLink {
    /// The transports `--transport` takes.
    public static let transports = ["udp", "rtp", "tcp", "mpegts", "srt", "rtsp"]

    /// The receiver's source, opened (nil for RTSP until ``openReceiver()``).
    private var source: ByteSource?
    /// The receiver's source as a URL (the feed's label).
    public let receiverURL: SourceURL
    /// Where the sender sends.
    public let destination: SourceURL
    /// The sender's framing: RTP, MPEG-TS, or (both false) raw Annex B.
    public let rtp: Bool
    /// See ``rtp``.
    public let mpegts: Bool
    /// The RTSP server, running until ``close()``.
    let server: Process?
    /// The server's URL (RTSP only).
    private var rtsp: (url: RTSPURL, transport: RTSPTransport)?

    /// Opens the receiving end of `transport` (and its server) on 127.0.0.1.
    /// - Throws: ``SourceError/open(_:)`` when a socket cannot be opened or the RTSP server
    ///   does not start (tools/rtsp-server missing, or GStreamer's RTSP server not installed).
    public static func open(_ transport: String, codec: VideoCodec, rtspTransport: RTSPTransport) throws -> BenchLink {
        switch transport {
        case "tcp":
            let tcp = try TCPSource(listenOn: "127.0.0.1", port: 0)
            let dest = SourceURL.tcpConnect(host: "127.0.0.1", port: tcp.listeningPort)
            return BenchLink(source: tcp, receiverURL: .tcpListen(host: "127.0.0.1", port: tcp.listeningPort), destination: dest,
                             rtp: false, mpegts: false, server: nil, rtsp: nil)
        case "srt":
            let srt = try SRTSource(url: SRTURL(host: "127.0.0.1", port: 0, mode: .listener))
            let port = srt.listeningPort
            return BenchLink(source: srt, receiverURL: .srt(SRTURL(host: "127.0.0.1", port: port, mode: .listener)),
                             destination: .srt(SRTURL(host: "127.0.0.1", port: port, mode: .caller)), rtp: false, mpegts: true, server: nil, rtsp: nil)
        case "rtsp":
            return try openRTSP(codec: codec, transport: rtspTransport)
        default:
            let udp = try UDPSource(host: "127.0.0.1", port: 0)
            let url = SourceURL.udp(host: "127.0.0.1", port: udp.boundPort)
            return BenchLink(source: udp, receiverURL: url, destination: url, rtp: transport == "rtp", mpegts: transport == "mpegts", server: nil, rtsp: nil)
        }
    }

    /// The receiver's source: opened already, or (RTSP) opened now. GStreamer's RTSP server
    /// answers DESCRIBE only once RTP flows into it: start the sender first.
    /// - Throws: ``SourceError/open(_:)`` when the RTSP server does not answer.
    public mutating func openReceiver() throws -> ByteSource {
        if let source { self.source = nil; return source }
        guard let rtsp else { throw SourceError.open("bench: the receiver is open already") }
        return try RTSPSource(url: rtsp.url, transport: rtsp.transport)
    }

    /// GStreamer's RTSP server relaying the sender's RTP; the client connects in ``openReceiver()``.
    private static func openRTSP(codec: VideoCodec, transport: RTSPTransport) throws -> BenchLink {
        // Ports the kernel just handed out, free again for the server.
        let udp = try UDPSource(host: "127.0.0.1", port: 0)
        let tcp = try TCPSource(listenOn: "127.0.0.1", port: 0)
        let (relayPort, rtspPort) = (udp.boundPort, tcp.listeningPort)
        udp.close()
        tcp.close()
        let server = try startRTSPServer(port: rtspPort, relayPort: relayPort, codec: codec)
        let url = try RTSPURL(parsing: "rtsp://127.0.0.1:\(rtspPort)/test")
        return BenchLink(source: nil, receiverURL: .rtsp(url), destination: .udp(host: "127.0.0.1", port: relayPort),
                         rtp: true, mpegts: false, server: server, rtsp: (url, transport))
    }

    /// Starts tools/rtsp-server and waits for its "ready" line.
    private static func startRTSPServer(port: UInt16, relayPort: UInt16, codec: VideoCodec) throws -> Process {
        guard let tool = toolPath("rtsp-server") else { throw SourceError.open("bench: tools/rtsp-server not found (run from the repository root)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        // Keyframe requests the client sends reach the sender as they would a camera's encoder.
        p.arguments = [tool, "--port", String(port), "--relay-rtp", String(relayPort), "--relay-rtcp", "auto",
                       "--codec", codec == .h265 ? "h265" : "h264"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard line.hasPrefix("ready") else {
            p.terminate()
            throw SourceError.open("bench: tools/rtsp-server did not start (GStreamer's RTSP server: tools/setup installs it)")
        }
        return p
    }

    /// Starts the pattern sender aimed at this link (its framing: RTP, MPEG-TS or raw Annex B),
    /// on a thread of its own.
    /// - Parameters:
    ///   - settings: the encoder's (codec, size, rate, bitrate, slices, preset).
    ///   - durationSeconds: how long it sends.
    ///   - clockOffsetMicros: it stamps as if its clock ran this far ahead (`--sender-clock-offset-ms`).
    /// - Returns: a flag set once it has sent, and its last frame has had 300 ms to arrive.
    /// - Parameter loss: the share of the sender's UDP datagrams dropped before they are sent
    ///   (`--loss`, seeded: the same run loses the same datagrams), 0 for none.
    public func startSender(_ settings: VideoEncoder.Settings, durationSeconds: Double, clockOffsetMicros: Int64,
                            loss: Double = 0) -> StopFlag {
        let done = StopFlag()
        let (dest, useRTP, useTS) = (destination, rtp, mpegts)
        let thread = Thread {
            defer { done.set() }
            do {
                let sender = try StreamSender(destination: dest)
                sender.loss = loss
                let live = LiveSender(input: .pattern(settings), sender: sender)
                live.durationSeconds = durationSeconds
                live.rtp = useRTP
                live.mpegts = useTS
                live.clockOffsetMicros = clockOffsetMicros
                try live.run()
                sender.finish()
                MonotonicClock.sleep(untilMicros: MonotonicClock.nowMicros() + 300_000)   // let the last frame through
            } catch {
                Log.error("sender: \(error)")
            }
        }
        thread.start()
        return done
    }

    /// Stops the server, if any.
    public func close() {
        server?.terminate()
        server?.waitUntilExit()
    }
}

/// A tool of the repository (`tools/NAME`), found from the working directory or next to the
/// built executable (`.build/<config>/spyglass`), or nil.
public func toolPath(_ name: String) -> String? {
    // The running binary itself (/proc/self/exe), not argv[0]: found on PATH, argv[0] is a bare name.
    let exe = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                  ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
    let candidates = ["tools/\(name)",
                      exe.deletingLastPathComponent().appendingPathComponent("../../tools/\(name)").standardized.path,
                      exe.deletingLastPathComponent().appendingPathComponent("../../../tools/\(name)").standardized.path]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}
