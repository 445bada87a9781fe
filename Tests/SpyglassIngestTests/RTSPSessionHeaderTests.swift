import Testing
@testable import SpyglassIngest

/// A server's `Session:` header (RFC 2326 §12.37) is read without trusting it: a bad answer
/// crashed `play` (an index out of range on "1;timeout=" or "", an overflow on a huge timeout).
@Suite struct RTSPSessionHeaderTests {
    @Test(arguments: [("12345678;timeout=60", "12345678", UInt64(60) as UInt64?), ("abc", "abc", nil), ("1;timeout=", "1", nil),
                      ("", "", nil), (";;;", "", nil), ("1;timeout=99999999999999", "1", UInt64(99_999_999_999_999) as UInt64?),
                      (" 7 ; timeout=30 ", "7", UInt64(30) as UInt64?), ("1;timeout=-5", "1", nil)])
    func aSessionHeaderIsReadWithoutTrust(header: String, id: String, timeout: UInt64?) {
        let s = RTSPSource.session(header)
        #expect(s.id == id && s.timeoutSeconds == timeout, "\(header): \(s)")
    }
}

/// What a server's DESCRIBE names goes into one log line: control characters cannot reach the
/// terminal (a track named `\u{1B}]0;PWNED\u{07}` set its title), and 10,000 tracks are not a
/// 140,000-character line.
@Suite struct RTSPServerTextTests {
    @Test func controlCharactersAreShownAsQuestionMarksAndLongTextIsCut() {
        #expect(RTSPSource.printable("audio\u{1B}]0;PWNED\u{07}\u{1B}[2J") == "audio?]0;PWNED??[2J")
        #expect(RTSPSource.printable(String(repeating: "a", count: 500)).count == 60)
    }

    @Test func aLongListNamesHowManyMore() {
        let tracks = (0..<10_000).map { "audio \($0)" }
        #expect(RTSPSource.list(tracks) == (0..<8).map { "audio \($0)" }.joined(separator: ", ") + " and 9992 more")
        #expect(RTSPSource.list(["video (MP2T)"]) == "video (MP2T)")
    }
}
