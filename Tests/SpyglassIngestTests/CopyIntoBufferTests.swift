import Testing
@testable import SpyglassIngest

/// ``UnsafeMutableRawBufferPointer/copyPrefix(of:from:)``: how RTSP, pcap and recorded sources
/// hand a datagram to the pipeline. An empty interleaved frame or pcap record used to reach a
/// force unwrap of an empty array's base address.
@Suite struct CopyIntoBufferTests {
    private func copy(_ bytes: [UInt8], from offset: Int = 0, into size: Int) -> (Int, [UInt8]) {
        var out = [UInt8](repeating: 0xEE, count: size)
        let n = out.withUnsafeMutableBytes { $0.copyPrefix(of: bytes, from: offset) }
        return (n, out)
    }

    @Test func anEmptyDatagramCopiesNothing() {
        #expect(copy([], into: 8).0 == 0)
        #expect(copy([1, 2, 3], into: 0).0 == 0)
        #expect(copy([1, 2, 3], from: 5, into: 8) == (0, [UInt8](repeating: 0xEE, count: 8)))
    }

    @Test func aDatagramLargerThanTheBufferIsCutToIt() {
        let (n, out) = copy([1, 2, 3, 4, 5], into: 3)
        #expect(n == 3 && out == [1, 2, 3])
    }

    @Test func anOffsetCopiesTheRestAndLeavesTheTailOfTheBuffer() {
        let (n, out) = copy([1, 2, 3, 4, 5], from: 3, into: 4)
        #expect(n == 2 && out == [4, 5, 0xEE, 0xEE])
    }
}
