// libFuzzer target: the SPS/PPS/VPS, slice-header, SEI and time-stamp parsers of both codecs.
// Input: one NAL unit as sent (header first, escaped).
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParameterSets(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let unit = Array(UnsafeBufferPointer(start: data, count: size))
    let s264 = try? H264SPS(nalUnit: unit, maxWidth: 4096, maxHeight: 4096)
    let p264 = try? H264PPS(nalUnit: unit)
    var spsByID: [Int: H264SPS] = [:], ppsByID: [Int: H264PPS] = [:]
    if let s264 { spsByID[Int(s264.seqParameterSetId)] = s264; _ = StreamFormat(s264) }
    if let p264 { ppsByID[Int(p264.picParameterSetId)] = p264 }
    _ = try? H264SliceHeaderStart(nalUnit: unit, spsByID: spsByID, ppsByID: ppsByID)
    _ = try? H265VPS(nalUnit: unit)
    if let s = try? H265SPS(nalUnit: unit, maxWidth: 4096, maxHeight: 4096) { _ = StreamFormat(s) }
    _ = try? H265PPS(nalUnit: unit)
    _ = try? H265SliceSegmentHeaderStart(nalUnit: unit, spsByID: [:], ppsByID: [:])
    for codec in [VideoCodec.h264, .h265] {
        _ = PrecisionTimestampSEI.read(seiNALUnit: unit, codec: codec)
        _ = RandomAccessGate.hasRecoveryPoint(unit, codec: codec)
        var store = ParameterSetStore(codec: codec, maxWidth: 4096, maxHeight: 4096)
        if let h = NALUnitHeader(codec: codec, bytes: unit) {
            store.store(header: h, unit: unit)
            _ = store.sliceInfo(header: h, unit: unit)
        }
    }
    let rbsp = RBSP.unescape(unit)
    for m in SEIMessages(rbsp: rbsp) { _ = PrecisionTimestampSEI.timestamp(fromPayload: Array(m.payload)) }
    if RBSP.unescape(RBSP.escape(rbsp)).prefix(rbsp.count) != rbsp[...] { fatalError("escape round trip") }
    return 0
}
