import Testing

@Suite struct PlayArgumentsTests {
    /// A mistyped option gets one line naming the option meant.
    @Test func aMistypedOptionGetsDidYouMean() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "x.h264", "--stall", "300"])
        #expect(rc == 2)
        #expect(err.contains("unknown option --stall (did you mean --stall-ms?)"), "\(err)")
        #expect(err.split(separator: "\n").count == 1)
    }

    /// A pair option out of range names the form and the range.
    @Test func aBadWindowSizeNamesTheForm() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "x.h264", "--window-size", "10x10"])
        #expect(rc == 2)
        #expect(err.contains("--window-size: '10x10' (use WxH, 64 to 8192 each)"), "\(err)")
    }

    /// The wall's options name their forms.
    @Test func badLayoutAndGravityNameTheForms() throws {
        let (rc, _, err) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "x.h264", "--layout", "9x9"])
        #expect(rc == 2)
        #expect(err.contains("--layout: '9x9' (use CxR, 1 to 8 each, e.g. 3x2)"), "\(err)")
        let (rc2, _, err2) = try Fixtures.run(Fixtures.spyglassBinary, ["play", "x.h264", "--gravity", "crop"])
        #expect(rc2 == 2)
        #expect(err2.contains("--gravity: 'crop' (use letterbox, fill or stretch)"), "\(err2)")
    }
}
