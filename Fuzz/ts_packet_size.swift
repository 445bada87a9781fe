// libFuzzer target: the MPEG-TS packet-size detector (188, 192 and 204 bytes) and the demultiplexer
// behind it. Input: a stream (or anything). The detector's answer must hold what it claims (a sync
// byte at the start of every whole packet it counted), and the demultiplexer must take the whole
// input in one push without crashing, hanging or growing.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTSPacketSize(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let b = UnsafeRawBufferPointer(start: data, count: size)
    if let s = TSPacketSize.detect(b) {
        let o = s.packetOffset
        if b.count < 188 + o || b[o] != 0x47 { fatalError("detected \(s.rawValue) without a first sync byte") }
        if b.count % s.rawValue == 0 && (s == .standard || b.count / s.rawValue >= 2) {
            for p in stride(from: o, to: b.count, by: s.rawValue) where b[p] != 0x47 { fatalError("packet at \(p) has no sync byte") }
        }
    }
    var d = MPEGTSDepacketizer(maxUnitBytes: 1 << 16, idleFlushMicros: 0)
    var bytes = 0
    d.push(b, arrivalMicros: 1, truncated: false) { if case .unit(let u) = $0 { bytes += u.bytes.count } }
    d.finish(nowMicros: 2) { if case .unit(let u) = $0 { bytes += u.bytes.count } }
    if bytes > size { fatalError("more bytes of NAL units (\(bytes)) than came in (\(size))") }
    return 0
}
