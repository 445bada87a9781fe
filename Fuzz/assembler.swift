// libFuzzer target: codec detection and access-unit assembly for both codecs, with idle
// flushes wherever the input says, plus the random-access gate.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAssembler(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var scanner = AnnexBScanner(maxUnitBytes: 1 << 16)
    var units: [NALUnit] = []
    scanner.push(bytes, arrivalMicros: 1) { units.append($0) }
    scanner.flush(atMicros: 2, reason: .endOfStream) { units.append($0) }
    var detector = CodecDetector(maxUnits: 8)
    for u in units { _ = detector.observe(u.bytes) }
    for codec in [VideoCodec.h264, .h265] {
        var asm = AccessUnitAssembler(codec: codec, maxAccessUnitBytes: 1 << 16, maxPictureWidth: 1024, maxPictureHeight: 1024)
        var gate = RandomAccessGate(timeoutMicros: 1_000, maxSkippedAccessUnits: 5)
        gate.restart(atMicros: 0)
        var count = 0
        for (k, u) in units.enumerated() {
            if let au = asm.push(u) { count += 1; _ = gate.admit(accessUnit: au, nowMicros: UInt64(k)); _ = au.annexB() }
            if u.bytes.count % 7 == 3, let au = asm.flush(atMicros: UInt64(k), reason: .idleGap) { count += 1; _ = au.byteCount }
        }
        if asm.flush(atMicros: 9, reason: .endOfStream) != nil { count += 1 }
        if count != asm.counters.accessUnits { fatalError("access unit count mismatch") }
        _ = asm.parameterSets.allUnits
    }
    return 0
}
