extension UnsafeMutableRawBufferPointer {
    /// Copies as much of `bytes[offset...]` as fits into the start of this buffer, the way a
    /// source hands one datagram (an interleaved RTSP frame, a pcap record, a recorded chunk) to
    /// the pipeline. Empty input or an empty buffer copies nothing (an empty array has no base
    /// address: this never unwraps one).
    /// - Returns: the bytes copied, `min(count, bytes.count - offset)`, 0 if `offset` is past the end.
    package func copyPrefix(of bytes: [UInt8], from offset: Int = 0) -> Int {
        let n = Swift.max(0, Swift.min(count, bytes.count - offset))
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { src in
            UnsafeMutableRawBufferPointer(rebasing: self[..<n])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<(offset + n)]))
        }
        return n
    }
}
