// libFuzzer target: the MPEG-TS demultiplexer (and the Annex B scanner under it). Input: a
// transport stream (or anything); the first byte picks how it is cut into pushes. Any cut must
// give the same NAL units, and nothing may crash, hang or grow without bound.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMPEGTS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let step = Int(bytes[0] % 200) + 1
    func run(_ step: Int) -> [[UInt8]] {
        var d = MPEGTSDepacketizer(maxUnitBytes: 1 << 16, idleFlushMicros: 0)
        var units: [[UInt8]] = []
        var i = 1
        while i < bytes.count {
            let end = min(bytes.count, i + step)
            Array(bytes[i..<end]).withUnsafeBytes { raw in
                d.push(raw, arrivalMicros: UInt64(i), truncated: false) { if case .unit(let u) = $0 { units.append(u.bytes) } }
            }
            i = end
        }
        d.finish(nowMicros: 0) { if case .unit(let u) = $0 { units.append(u.bytes) } }
        return units
    }
    if run(step) != run(bytes.count) { fatalError("cuts changed the units") }
    return 0
}
