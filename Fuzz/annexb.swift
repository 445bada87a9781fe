// libFuzzer target: the Annex B splitter. Input: a byte stream; the first byte picks how the
// stream is cut into pushes. Every cut must give the same NAL units as one push.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAnnexB(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let step = Int(bytes[0] % 64) + 1
    var whole = AnnexBScanner(maxUnitBytes: 4096)
    var a: [[UInt8]] = []
    whole.push(Array(bytes.dropFirst()), arrivalMicros: 0) { a.append($0.bytes) }
    whole.flush(atMicros: 0, reason: .endOfStream) { a.append($0.bytes) }
    var cut = AnnexBScanner(maxUnitBytes: 4096)
    var b: [[UInt8]] = []
    var i = 1
    while i < bytes.count {
        let end = min(bytes.count, i + step)
        cut.push(Array(bytes[i..<end]), arrivalMicros: 0) { b.append($0.bytes) }
        i = end
    }
    cut.flush(atMicros: 0, reason: .endOfStream) { b.append($0.bytes) }
    if a != b { fatalError("cuts changed the units") }
    for u in a where u.isEmpty || u.last == 0 { fatalError("empty unit or trailing zero") }
    return 0
}
