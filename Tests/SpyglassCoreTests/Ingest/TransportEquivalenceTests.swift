import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
@testable import SpyglassIngest

/// UDP in random datagram sizes, TCP (client and listen) in random write sizes, and stdin all
/// give the same pictures as the file.
///
/// Serialized: live receivers on loopback, fed as fast as they read.
@Suite(.serialized) struct TransportEquivalenceTests {
    let captures = ["test/h264-high-4slices.h264", "test/h265-main.h265"]

    @Test func udpRandomDatagramSizes() throws {
        for name in captures {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            let source = try UDPSource(host: "127.0.0.1", port: 0)
            let boundPort = source.boundPort
            let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
            h.start()
            let cuts = Sender.randomCuts(try Fixtures.bytes(path), sizes: 1...1400, seed: 42)
            #expect(cuts.count > expected.count, "frames span several datagrams")
            Sender.udp(port: boundPort, datagrams: cuts)
            let r = h.finish()
            #expect(r.hashes == expected, "UDP \(name)")
            #expect(r.summary.datagrams == cuts.count)
        }
    }

    @Test func tcpClientRandomWriteSizes() throws {
        for name in captures {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            let (lfd, port) = Sender.tcpListener()
            let bytes = try Fixtures.bytes(path)
            let sender = Thread {
                let c = accept(lfd, nil, nil)
                Sender.tcpWrite(fd: c, chunks: Sender.randomCuts(bytes, sizes: 1...3000, seed: 9))
                close(lfd)
            }
            sender.start()
            let source = try TCPSource(connectTo: "127.0.0.1", port: port)
            let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
            h.start()
            let r = h.finish()
            #expect(r.hashes == expected, "TCP client \(name)")
        }
    }

    @Test func tcpListenRandomWriteSizes() throws {
        for name in captures {
            let path = Fixtures.capture(name)
            let expected = try Fixtures.ffmpegFrameMD5(path)
            let source = try TCPSource(listenOn: "127.0.0.1", port: 0)
            let listeningPort = source.listeningPort
            let port = listeningPort
            let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
            h.start()
            let fd = Sender.tcpConnect(port: port)
            #expect(fd >= 0)
            Sender.tcpWrite(fd: fd, chunks: Sender.randomCuts(try Fixtures.bytes(path), sizes: 1...5000, seed: 5))
            let r = h.finish()
            #expect(r.hashes == expected, "TCP listen \(name)")
            #expect(r.summary.connections == 1)
        }
    }

    @Test func tcpOneByteReads() throws {
        let path = Fixtures.capture("test/h264-baseline.h264")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let source = try TCPSource(listenOn: "127.0.0.1", port: 0)
        let listeningPort = source.listeningPort
        let port = listeningPort
        let h = Harness(source: source, options: Harness.liveOptions(frames: expected.count))
        h.start()
        let fd = Sender.tcpConnect(port: port)
        let bytes = try Fixtures.bytes(path)
        // 1-byte writes for the first 4 KiB (start codes cut everywhere), then the rest.
        Sender.tcpWrite(fd: fd, chunks: bytes.prefix(4096).map { [$0] } + [Array(bytes.dropFirst(4096))])
        let r = h.finish()
        #expect(r.hashes == expected)
    }

    @Test func stdinGivesTheFileHashes() throws {
        let path = Fixtures.capture("test/h265-main.h265")
        let expected = try Fixtures.ffmpegFrameMD5(path)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("stdin-\(getpid()).framemd5").path
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary,
            ["play", "-", "--display", "none", "--untimed", "--idle-flush-ms", "100", "--framemd5", out],
            stdin: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(rc == 0, "\(err)")
        let got = Fixtures.parseFrameMD5(try String(contentsOfFile: out, encoding: .utf8))
        #expect(got == expected)
        #expect(err.contains("\(expected.count) frames decoded"), "\(err)")
    }
}
