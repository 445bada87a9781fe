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
