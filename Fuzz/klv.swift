// libFuzzer target: KLV (SMPTE ST 336) and the MISB ST 0601 local set, alone and as the payload
// of a metadata PES (both stream types, cut into TS-sized pieces). Bad BER lengths, checksums
// and cells must be drops, never a crash or unbounded memory.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKLV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let (packets, _) = KLV.packets(bytes[...])
    for p in packets { _ = UASLocalSet.decode(p)?.positionText }
    _ = MetadataPES.cellData(bytes[...])
    for synchronous in [false, true] {
        var pes = MetadataPES(synchronous: synchronous)
        let header: [UInt8] = [0, 0, 1, 0xBD, UInt8(min(65_535, bytes.count + 8) >> 8), UInt8(min(65_535, bytes.count + 8) & 0xFF),
                               0x80, 0x80, 5, 0x21, 0, 1, 0, 1]
        let stream = header + bytes
        var i = 0
        while i < stream.count {
            let n = min(184, stream.count - i)
            _ = pes.push(stream[i..<(i + n)], start: i == 0)
            i += n
        }
        _ = pes.push(header[...], start: true)
    }
    return 0
}
