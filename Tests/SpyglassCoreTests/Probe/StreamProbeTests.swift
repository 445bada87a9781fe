import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
import TestSupport

/// `spyglass probe` against captures made with known settings (tools/make-captures).
@Suite struct StreamProbeTests {
    private func probe(_ name: String, extra: [String] = []) throws -> [String: Any] {
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", Fixtures.capture(name), "--json"] + extra)
        #expect(rc == 0, "\(err)")
        return try #require(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
    }

    @Test func fieldsOfKnownCaptures() throws {
        let bframes = try probe("test/h264-main-bframes.h264")
        #expect(bframes["codec"] as? String == "H.264")
        #expect(bframes["profile"] as? String == "Main")
        #expect(bframes["bFrames"] as? Bool == true)
        #expect(bframes["keyframeInterval"] as? [Int] == [30], "keyint 30")
        #expect(bframes["accessUnits"] as? Int == 45)

        let slices = try probe("test/h264-high-4slices.h264")
        #expect(slices["slicesPerPicture"] as? [Int] == [4])
        #expect(slices["bFrames"] as? Bool == false)
        #expect(slices["reorderDepth"] as? Int == 0)

        let refresh = try probe("test/h264-intra-refresh.h264")
        #expect(refresh["intraRefresh"] as? Bool == true)
        #expect(refresh["keyframes"] as? Int == 1)
        #expect((refresh["recoveryPoints"] as? Int ?? 0) > 0)

        let main10 = try probe("test/h265-main10.h265")
        #expect(main10["codec"] as? String == "H.265")
        #expect(main10["profile"] as? String == "Main 10")
        #expect(main10["bitDepth"] as? Int == 10)
        #expect(main10["frameRateVUI"] as? Double == 30)

        let open = try probe("test/h265-opengop.h265")
        #expect(open["openGOP"] as? Bool == true)
        #expect((try probe("test/h265-main.h265")["openGOP"] as? Bool) == false)

        let chroma = try probe("test/h264-422.h264")
        #expect(chroma["chroma"] as? String == "4:2:2")
        #expect((try probe("test/h264-fps25.h264"))["frameRateVUI"] as? Double == 25)
    }

    /// The filler-and-end-units case: the probe counts exactly the frames the decoder does.
    @Test func probeCountsAgreeWithTheDecoder() throws {
        for name in ["cases/filler.h264", "cases/end_of_seq.h264", "cases/filler_eob.h265"] {
            let p = try probe(name)
            #expect(p["accessUnits"] as? Int == 60, "\(name)")
            #expect((p["errors"] as? [String])?.isEmpty == true, "\(name)")
        }
    }

    @Test func mangledInputIsReportedNotFatal() throws {
        let bytes = try Fixtures.bytes(Fixtures.capture("test/h264-baseline.h264"))
        var mangled = Array(bytes)
        var rng = SeededRandom(seed: 5)
        for _ in 0..<200 { mangled[rng.next(in: 100...(mangled.count - 1))] ^= UInt8(rng.next(in: 1...255)) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mangled-\(getpid()).h264")
        try Data([0xAB, 0xCD] + mangled).write(to: url)
        let (rc, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", url.path, "--json"])
        #expect(rc == 0)
        let p = try #require(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(!((p["errors"] as? [String] ?? []).isEmpty), "errors found and listed")
    }
}
