import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession

/// What a stalled single-feed window says about why no picture comes (issue 18: a sender that
/// sent 121 frames and exited left "39 datagrams since the last picture, none made one").
@Suite struct StallReasonTests {
    static func summary(datagrams: Int) -> FeedSummary {
        var s = FeedSummary()
        s.datagrams = datagrams
        return s
    }

    @Test func datagramsThatStillArriveWithoutAPictureAreNamed() {
        let why = StallReason.text(Self.summary(datagrams: 160), since: 121, silentMicros: 20_000, stallMicros: 500_000,
                                         state: .live, label: "udp://:5600")
        #expect(why == "39 datagrams since the last picture, none made one")
    }

    @Test func aSenderThatStoppedIsNoDataEvenWithDatagramsAfterItsLastPicture() {
        let why = StallReason.text(Self.summary(datagrams: 160), since: 121, silentMicros: 2_000_000, stallMicros: 500_000,
                                         state: .live, label: "udp://:5600")
        #expect(why == "no data from udp://:5600")
    }

    @Test func aCameraThatCannotBeReachedSaysWhy() {
        let why = StallReason.text(Self.summary(datagrams: 0), since: 0, silentMicros: 9_000_000, stallMicros: 500_000,
                                         state: .connecting("Connection refused"), label: "rtsp://cam/main")
        #expect(why == "cannot reach rtsp://cam/main: Connection refused")
        let gone = StallReason.text(Self.summary(datagrams: 10), since: 10, silentMicros: 9_000_000, stallMicros: 500_000,
                                          state: .reconnecting, label: "tcp://cam:8888")
        #expect(gone == "sender disconnected")
    }
}
