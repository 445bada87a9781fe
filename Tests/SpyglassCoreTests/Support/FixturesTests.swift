import Foundation
import Testing
import SpyglassFeed
import SpyglassDisplay
import SpyglassSession
@testable import SpyglassIngest

/// `Fixtures.run`, which every test that starts ffmpeg, xvfb-run or spyglass goes through: it must
/// never hang, whatever the child does with its pipes.
@Suite struct FixturesRunTests {
    /// The child writes 1 MiB to stderr before it reads its stdin, then copies stdin to stdout:
    /// reading the pipes one after the other (or only after writing stdin) would hang both sides.
    @Test func aChildFillingStderrBeforeReadingStdinDoesNotHang() throws {
        let input = Data(repeating: 0x5A, count: 1 << 20)
        let (rc, out, err) = try Fixtures.run("/bin/sh", ["-c", "head -c 1048576 /dev/zero >&2; cat"],
                                              stdin: input, timeoutSeconds: 60)
        #expect(rc == 0)
        #expect(err.utf8.count == 1 << 20)
        #expect(out.utf8.count == input.count)
    }

    @Test func aChildThatDoesNotExitIsKilledAndReported() throws {
        let error = #expect(throws: NSError.self) { try Fixtures.run("/bin/sleep", ["60"], timeoutSeconds: 1) }
        #expect(error?.localizedDescription.contains("did not exit within 1 s") == true, "\(String(describing: error))")
    }

    @Test func aMissingProgramIsReportedByName() throws {
        let error = #expect(throws: NSError.self) { try Fixtures.run("/nonexistent/tool", []) }
        #expect(error?.localizedDescription.contains("/nonexistent/tool is not installed") == true)
    }
}

/// `Fixtures.udpPortIsBound`, which tests use to wait for a child's socket without taking its port.
@Suite struct UDPPortIsBoundTests {
    /// 200 other sockets first: the table runs over several pages of /proc/net/udp.
    @Test func aBoundPortIsSeenBehindManyOtherSockets() throws {
        let others = try (0..<200).map { _ in try UDPSource(host: "127.0.0.1", port: 0) }
        defer { others.forEach { $0.close() } }
        // A port below the kernel's ephemeral range (32768-60999): the other tests' sockets bind
        // port 0, and one of them could take a freed ephemeral port before the check below.
        var found: UDPSource?
        for _ in 0..<50 where found == nil { found = try? UDPSource(host: "127.0.0.1", port: UInt16.random(in: 20_000..<32_000)) }
        let s = try #require(found, "a free port below the ephemeral range")
        let port = s.boundPort
        #expect(Fixtures.udpPortIsBound(port))
        s.close()
        // Closed again: the table must agree with the kernel. Another test's child may bind the
        // freed port at once (it happened in a clean-clone run), so the check is that the answer
        // matches whether the port can be bound, not that it is free.
        var agreed = false
        for _ in 0..<5 where !agreed {
            let seen = Fixtures.udpPortIsBound(port)
            let probe = try? UDPSource(host: "127.0.0.1", port: port)
            probe?.close()
            agreed = seen == (probe == nil)
        }
        #expect(agreed, "udpPortIsBound(\(port)) agrees with bind(2) once the port is closed")
    }
}
