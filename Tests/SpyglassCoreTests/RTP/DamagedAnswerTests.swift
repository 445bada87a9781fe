import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassBitstream
import TestSupport
@testable import SpyglassTransport
@testable import SpyglassPipeline

/// A keyframe request's answer, and the pictures around a loss, as the RTP depacketizer and the
/// access-unit stage see them (issue 19): the IDR that answers a PLI is the largest picture and
/// the one most often hit by the same loss; a loss at a picture's edge belongs to one picture
/// only.
@Suite struct DamagedAnswerTests {
    /// What one run gave: the access units, and when a keyframe request or a recovery came out.
    private struct Run {
        var accessUnits: [AccessUnit] = []
        var requests: [(micros: UInt64, reason: KeyframeRequester.Reason)] = []
        var recoveries: [UInt64] = []
    }

    /// A capture's access units: an IDR first, P pictures after it (AUD-led, one slice each),
    /// and another's with 4 slices a picture and no delimiters.
    private let aus: [[UInt8]], sliced: [[UInt8]]

    init() throws {
        aus = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-aud.h264")))
        sliced = Sender.accessUnits(of: try Fixtures.bytes(Fixtures.capture("test/h264-high-4slices.h264")))
    }

    /// Sends each picture (`aus` index) 33 ms apart through one depacketizer and access-unit
    /// stage, in 300-byte RTP packets, leaving out the packets `drop` names (picture, packet).
    private func run(_ pictures: [Int], drop: Set<[Int]>, mtu: Int = 300, of aus: [[UInt8]]? = nil) -> Run {
        let aus = aus ?? self.aus
        var dp = RTPStreamDepacketizer()
        var stage = AccessUnitStage()
        var packetizer = RTPPacketizer(codec: .h264, ssrc: 9, mtu: mtu)
        var run = Run()
        for (i, picture) in pictures.enumerated() {
            let now = 1_000_000 + UInt64(i) * 33_000
            let packets = packetizer.packetize(RTCPTests.units(aus[picture]), timestamp90kHz: UInt32(i * 3000))
            for (k, p) in packets.enumerated() where !drop.contains([i, k]) {
                p.withUnsafeBytes {
                    dp.push($0, arrivalMicros: now, truncated: false) { e in
                        switch e {
                        case .unit(let u): stage.push(u, codecHint: .h264) { if case .accessUnit(let a, _) = $0 { run.accessUnits.append(a) } }
                        case .damage: stage.markDamaged()
                        case .accessUnitEnd(let r, let at, let m):
                            stage.end(by: r, atMicros: at, minimumSlices: m) { if case .accessUnit(let a, _) = $0 { run.accessUnits.append(a) } }
                        case .toSender(_, let reason?): run.requests.append((now, reason))
                        case .recovered: run.recoveries.append(now)
                        default: break
                        }
                    }
                }
            }
        }
        return run
    }

    /// Packets of picture `i` of `pictures` (to choose which to drop).
    private func packetCount(_ picture: Int, mtu: Int = 300, of aus: [[UInt8]]? = nil) -> Int {
        let aus = aus ?? self.aus
        var p = RTPPacketizer(codec: .h264, ssrc: 9, mtu: mtu)
        return p.packetize(RTCPTests.units(aus[picture]), timestamp90kHz: 0).count
    }

    /// The IDR that answers a request lost a packet: the request stays, and the next one goes at
    /// once (not 200 ms later); the next whole IDR ends it.
    @Test func aDamagedAnswerIsAskedForAgainAtOnce() throws {
        let idrPackets = packetCount(0)
        try #require(idrPackets >= 4, "the IDR spans several packets")
        // IDR, P (a packet lost: ask), IDR (a middle packet lost: ask again at once), P, IDR whole.
        let r = run([0, 1, 0, 2, 0], drop: [[1, 2], [2, idrPackets / 2]])
        #expect(r.requests.map(\.micros) == [1_033_000, 1_066_000], "asked at the loss, and again at the damaged answer")
        #expect(r.requests.allSatisfy { $0.reason == .loss })
        #expect(r.recoveries == [1_132_000], "clean again only at the whole IDR")
        #expect(r.accessUnits.map(\.damaged) == [false, true, true, false, false])
    }

    /// The last packet of a picture of 4 slices (its marker, a fragmentation unit's end) is lost:
    /// the cut slice belongs to that picture, not to a picture of its own or to the IDR after it.
    @Test func aCutAtAPicturesEndStaysInThatPicture() throws {
        let lastSlice = try #require(RTCPTests.units(sliced[1]).last)
        try #require(lastSlice.count > 2 * 64, "the last slice is cut into fragmentation units")
        let last = packetCount(1, mtu: 76, of: sliced) - 1
        let r = run([0, 1, 0], drop: [[1, last]], mtu: 76, of: sliced)
        try #require(r.accessUnits.count == 3, "one access unit a picture")
        #expect(r.accessUnits[1].damaged, "the picture that lost its end")
        #expect(r.accessUnits[1].units.filter { $0.header?.isVCL == true }.count == 4, "all 4 slices, the last one cut")
        #expect(!r.accessUnits[2].damaged, "the IDR after it is whole")
        #expect(r.recoveries == [1_066_000])
    }

    /// Every slice of a picture is lost (only its delimiter came): the IDR after it is clean,
    /// a P picture after it is on a missing reference.
    @Test func aPictureLostWholeDamagesThePictureAfterItUnlessItIsAnIDR() throws {
        let slices = Set((1..<packetCount(1)).map { [1, $0] })
        let idr = run([0, 1, 0], drop: slices)
        #expect(idr.accessUnits.map(\.damaged) == [false, false], "the IDR after the lost picture is clean")
        let p = run([0, 1, 2], drop: slices)
        #expect(p.accessUnits.map(\.damaged) == [false, true], "the P picture after it is damaged")
    }
}
