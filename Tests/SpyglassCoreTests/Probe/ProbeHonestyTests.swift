import Foundation
import Testing
@testable import SpyglassCore

/// A live probe never answers with confidence when it has seen nothing.
@Suite struct ProbeHonestyTests {
    @Test func aSilentPortSaysNothingArrived() throws {
        let port = try Sender.freeUDPPort()
        let (_, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", "udp://127.0.0.1:\(port)", "--duration", "0.5"])
        #expect(out.contains("nothing: 0 datagrams"), "\(out)")
        #expect(!out.contains("0x0"), "no picture format is made up")
    }

    @Test func dataWithoutParameterSetsSaysSoAndWhatArrived() {
        var probe = StreamProbe()
        var s = FeedSummary()
        s.datagrams = 12
        s.bytes = 9000
        s.durationSeconds = 5
        probe.finish(summary: s, live: true, datagramSizes: Array(repeating: 750, count: 12))
        #expect(probe.text.contains("12 datagrams (or reads), 9000 bytes in 5.0 s"), "\(probe.text)")
        #expect(probe.text.contains("none seen (no SPS/PPS)"))
        #expect(!probe.text.contains("0x0"))
    }
}
