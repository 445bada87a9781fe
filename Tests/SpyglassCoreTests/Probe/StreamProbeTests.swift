import XCTest
@testable import SpyglassCore

/// `spyglass probe` against captures made with known settings (tools/make-captures).
final class StreamProbeTests: XCTestCase {
    private func probe(_ name: String, extra: [String] = []) throws -> [String: Any] {
        let (rc, out, err) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", Fixtures.capture(name), "--json"] + extra)
        XCTAssertEqual(rc, 0, err)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
    }

    func testFieldsOfKnownCaptures() throws {
        let bframes = try probe("test/h264-main-bframes.h264")
        XCTAssertEqual(bframes["codec"] as? String, "H.264")
        XCTAssertEqual(bframes["profile"] as? String, "Main")
        XCTAssertEqual(bframes["bFrames"] as? Bool, true)
        XCTAssertEqual(bframes["keyframeInterval"] as? [Int], [30], "keyint 30")
        XCTAssertEqual(bframes["accessUnits"] as? Int, 45)

        let slices = try probe("test/h264-high-4slices.h264")
        XCTAssertEqual(slices["slicesPerPicture"] as? [Int], [4])
        XCTAssertEqual(slices["bFrames"] as? Bool, false)
        XCTAssertEqual(slices["reorderDepth"] as? Int, 0)

        let refresh = try probe("test/h264-intra-refresh.h264")
        XCTAssertEqual(refresh["intraRefresh"] as? Bool, true)
        XCTAssertEqual(refresh["keyframes"] as? Int, 1)
        XCTAssertGreaterThan(refresh["recoveryPoints"] as? Int ?? 0, 0)

        let main10 = try probe("test/h265-main10.h265")
        XCTAssertEqual(main10["codec"] as? String, "H.265")
        XCTAssertEqual(main10["profile"] as? String, "Main 10")
        XCTAssertEqual(main10["bitDepth"] as? Int, 10)
        XCTAssertEqual(main10["frameRateVUI"] as? Double, 30)

        let open = try probe("test/h265-opengop.h265")
        XCTAssertEqual(open["openGOP"] as? Bool, true)
        XCTAssertEqual(try probe("test/h265-main.h265")["openGOP"] as? Bool, false)

        let chroma = try probe("test/h264-422.h264")
        XCTAssertEqual(chroma["chroma"] as? String, "4:2:2")
        XCTAssertEqual((try probe("test/h264-fps25.h264"))["frameRateVUI"] as? Double, 25)
    }

    /// The filler-and-end-units case: the probe counts exactly the frames the decoder does.
    func testProbeCountsAgreeWithTheDecoder() throws {
        for name in ["cases/filler.h264", "cases/end_of_seq.h264", "cases/filler_eob.h265"] {
            let p = try probe(name)
            XCTAssertEqual(p["accessUnits"] as? Int, 60, name)
            XCTAssertEqual((p["errors"] as? [String])?.isEmpty, true, name)
        }
    }

    func testMangledInputIsReportedNotFatal() throws {
        let bytes = try Fixtures.bytes(Fixtures.capture("test/h264-baseline.h264"))
        var mangled = Array(bytes)
        var rng = SeededRandom(seed: 5)
        for _ in 0..<200 { mangled[rng.next(in: 100...(mangled.count - 1))] ^= UInt8(rng.next(in: 1...255)) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mangled-\(getpid()).h264")
        try Data([0xAB, 0xCD] + mangled).write(to: url)
        let (rc, out, _) = try Fixtures.run(Fixtures.spyglassBinary, ["probe", url.path, "--json"])
        XCTAssertEqual(rc, 0)
        let p = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        XCTAssertFalse((p["errors"] as? [String] ?? []).isEmpty, "errors found and listed")
    }
}
