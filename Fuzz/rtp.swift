// libFuzzer target: the RTP depacketizer. Input: datagrams, each prefixed by a 2-byte length.
// Runs the generic RTP layer (sequence, reorder window) and both payload formats.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var datagrams: [[UInt8]] = []
    var i = 0
    while i + 2 <= bytes.count {
        let n = Int(bytes[i]) << 8 | Int(bytes[i + 1])
        i += 2
        let end = min(bytes.count, i + n)
        datagrams.append(Array(bytes[i..<end]))
        i = end
    }
    for (codec, window) in [(VideoCodec?.none, UInt64(0)), (.some(.h264), 5_000), (.some(.h265), 0)] {
        var r = RTPReceiver(codec: codec, reorderWindowMicros: window)
        var units = 0
        for (k, d) in datagrams.enumerated() {
            r.push(d, arrivalMicros: UInt64(k) * 1_000) { e in if case .unit(let u) = e { units += 1; if u.bytes.isEmpty { fatalError("empty unit") } } }
            r.tick(nowMicros: UInt64(k) * 1_000 + 500) { _ in }
        }
        _ = r.counters
        _ = units
    }
    for d in datagrams { _ = try? RTPPacket(datagram: d[...]); _ = RTPPacket.looksLikeRTP(d[...]) }
    return 0
}
