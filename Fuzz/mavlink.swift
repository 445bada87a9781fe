// libFuzzer target: the MAVLink parser, Telemetry and the .tlog reader. Input: a MAVLink stream
// (or anything). It is pushed whole, a byte at a time (a cut at every offset), and in pieces
// whose sizes come from a generator seeded by the first byte; every cut must give the same
// frames and counters, hold under 280 bytes, and account for every byte. The frames then feed
// a Telemetry, each must be judged the same alone, and the input is read as a .tlog and the
// frames' own records read back.
import SpyglassBitstream
import SpyglassTransport
import SpyglassPipeline

/// The frames and counters of `bytes` pushed in pieces of `sizes()` bytes, then finished.
private func parse(_ bytes: [UInt8], _ sizes: () -> Int) -> ([MAVLinkFrame], MAVLinkParser.Counters) {
    var parser = MAVLinkParser()
    var frames: [MAVLinkFrame] = []
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + sizes())
        frames += parser.push(bytes[i..<end])
        precondition(parser.bufferedByteCount < MAVLinkFrame.maxLength, "held a whole frame's worth")
        i = end
    }
    let held = parser.bufferedByteCount
    let accounted = frames.reduce(0) { $0 + $1.raw.count } + parser.counters.bytesSkipped + held
    precondition(accounted == bytes.count, "bytes unaccounted for")
    frames += parser.finish()
    return (frames, parser.counters)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMAVLink(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = parse(bytes) { bytes.count }
    let single = parse(bytes) { 1 }
    var state = UInt64(bytes.first ?? 0) &+ 0x9E37_79B9_7F4A_7C15
    let pieces = parse(bytes) {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return Int((state &* 2_685_821_657_736_338_717) >> 56) + 1
    }
    precondition(whole.0 == single.0 && whole.0 == pieces.0, "cuts changed the frames")
    precondition(whole.1 == single.1 && whole.1 == pieces.1, "cuts changed the counters")
    precondition(whole.0.allSatisfy { MAVLinkParser.frame(exactly: $0.raw) == $0 }, "a frame alone judged differently")
    var telemetry = Telemetry()
    for (k, frame) in whole.0.enumerated() {
        telemetry.apply(frame, arrivalMicros: UInt64(k) * 1000)
    }
    _ = (telemetry.distanceToHome, telemetry.bearingToHome, telemetry.flightTimeMicros(nowMicros: UInt64(size) * 1000))
    _ = TLog.read(bytes)
    let log = whole.0.flatMap { TLog.record(frame: $0, utcMicros: 1_764_600_000_000_000) }
    precondition(TLog.read(log).map(\.frame) == whole.0, "a .tlog of the frames read back different")
    return 0
}
