import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// Real senders no one here wrote: GStreamer's encoders and payloaders, the pipelines many drone
/// and camera links run. Each case encodes once, writes the encoder's own output beside the
/// network (`tee`), and every picture Spyglass shows must equal ffmpeg's framemd5 of that file.
@Suite(.serialized) struct GStreamerSenderTests {
    static let gst = "/usr/bin/gst-launch-1.0"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: gst) }

    /// One sender case: an encoder, what carries it, and how Spyglass listens.
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        /// The encoder part, from raw I420 to an Annex B byte stream.
        var encoder: String
        /// The network part after the tee (`PORT` is replaced by the port).
        var network: String
        var transport: ReceiverOptions.Transport = .auto
        var tcp = false
        /// Spyglass listens (`tcp://:PORT?listen`) and the sender connects (`tcpclientsink`).
        var tcpListen = false
        var description: String { name }
    }

    static let raw = "videotestsrc num-buffers=45 pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=30/1"

    static let cases: [Case] = [
        Case(name: "x264enc 4 slices, rtph264pay config-interval=-1 (SPS/PPS before every IDR slice)",
             encoder: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 option-string=slices=4 ! video/x-h264,stream-format=byte-stream,profile=main",
             network: "rtph264pay config-interval=-1 pt=96 mtu=1200 ! udpsink host=127.0.0.1 port=PORT"),
        Case(name: "x264enc zero-latency sliced threads, rtph264pay aggregate-mode=zero-latency",
             encoder: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 sliced-threads=true threads=2 ! video/x-h264,stream-format=byte-stream,profile=main",
             network: "rtph264pay config-interval=1 aggregate-mode=zero-latency pt=96 ! udpsink host=127.0.0.1 port=PORT"),
        Case(name: "x265enc, rtph265pay config-interval=-1",
             encoder: "x265enc tune=zerolatency speed-preset=ultrafast key-int-max=15 ! video/x-h265,stream-format=byte-stream",
             network: "rtph265pay config-interval=-1 pt=96 mtu=1200 ! udpsink host=127.0.0.1 port=PORT"),
        Case(name: "openh264enc, rtph264pay",
             encoder: "openh264enc gop-size=15 ! video/x-h264,stream-format=byte-stream",
             network: "rtph264pay config-interval=-1 pt=96 ! udpsink host=127.0.0.1 port=PORT"),
        Case(name: "x264enc 2 slices, raw byte stream over udpsink",
             encoder: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 option-string=slices=2 ! video/x-h264,stream-format=byte-stream,profile=main",
             network: "udpsink host=127.0.0.1 port=PORT", transport: .raw),
        Case(name: "x264enc, tcpserversink",
             encoder: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 ! video/x-h264,stream-format=byte-stream,profile=main",
             network: "tcpserversink host=127.0.0.1 port=PORT sync-method=burst-keyframe", tcp: true),
        Case(name: "x264enc 2 slices, tcpclientsink into tcp://:PORT?listen",
             encoder: "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 option-string=slices=2 ! video/x-h264,stream-format=byte-stream,profile=main",
             network: "tcpclientsink host=127.0.0.1 port=PORT", tcpListen: true),
    ]

    @Test(.enabled(if: available, "GStreamer is not installed: run tools/setup (gstreamer1.0-tools and the plugins)"),
          arguments: cases)
    func everyPictureEqualsTheEncodersOwn(_ c: Case) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gst-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let ref = "\(dir)/\(abs(c.name.hashValue)).es"
        var options = Harness.liveOptions(frames: 45, idleFlushMicros: 1_000)
        options.transport = c.transport
        options.timeoutSeconds = 3
        let port: UInt16
        let harness: Harness?
        if c.tcp {
            port = try Sender.freeTCPPort()
            harness = nil
        } else if c.tcpListen {
            // Listening before the sender starts: it connects at once and sends from its first picture.
            let tcp = try TCPSource(listenOn: "127.0.0.1", port: 0)
            port = tcp.listeningPort
            harness = Harness(source: tcp, options: options)
            harness!.start()
        } else {
            let udp = try UDPSource(host: "127.0.0.1", port: 0)
            port = udp.boundPort
            harness = Harness(source: udp, options: options)
            harness!.start()
        }
        let pipeline = "\(Self.raw) ! \(c.encoder) ! tee name=t t. ! queue ! filesink location=\(ref) t. ! queue ! \(c.network.replacingOccurrences(of: "PORT", with: String(port)))"
        let sender = try Fixtures.start(Self.gst, ["-q"] + pipeline.split(separator: " ").map(String.init))
        var result: Harness.Result
        if c.tcp {
            // Spyglass connects once GStreamer's server listens.
            #expect(Wait.until { Fixtures.tcpPortIsListening(port) }, "tcpserversink listens within 10 s")
            let h = Harness(source: try TCPSource(connectTo: "127.0.0.1", port: port), options: options)
            h.start()
            result = h.finish()
        } else {
            result = harness!.finish()
        }
        let (status, err) = sender.wait()
        try #require(status == 0, "gst-launch failed: \(err)")
        let expected = try Fixtures.ffmpegFrameMD5(ref)
        try #require(expected.count > 0)
        // A TCP client may join after the first pictures: then it starts at a keyframe.
        let offset = c.tcp ? (expected.firstIndex(of: result.hashes.first ?? expected[0]) ?? 0) : 0
        #expect(result.hashes.count == expected.count - offset, "\(c): pictures")
        #expect(result.hashes == Array(expected[offset...]), "\(c): every picture equals the encoder's own")
        #expect(result.damaged.allSatisfy { !$0 }, "\(c): nothing flagged damaged")
        #expect(result.summary.decodeErrors == 0)
    }
}
