// libFuzzer target: RTP header extensions (RFC 8285 one- and two-byte forms) and the capture times
// they carry (RFC 6051 NTP-64, abs-capture-time). Input: datagrams, each prefixed by a 2-byte
// length. Every element found must lie inside its extension; the receiver, told an extension id,
// must take the datagrams without crashing.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTPExtension(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
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
    let kinds = [CaptureTimeExtension(kind: .ntp64, id: 1)!, CaptureTimeExtension(kind: .absCaptureTime, id: 3)!]
    for d in datagrams {
        guard let ext = (try? RTPPacket(datagram: d[...]))?.headerExtension else { continue }
        for id in [1, 2, 3, 14, 15, 16, 255] {
            if let e = ext.element(id: id), e.startIndex < ext.data.startIndex || e.endIndex > ext.data.endIndex {
                fatalError("element \(id) outside its extension")
            }
        }
        for k in kinds { _ = k.captureWallMicros(in: ext) }
    }
    var r = RTPReceiver(codec: .h264, captureExtension: kinds[0])
    for (k, d) in datagrams.enumerated() {
        r.push(d, arrivalMicros: UInt64(k) * 1_000) { _ in }
    }
    return 0
}
