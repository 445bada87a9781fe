import SpyglassBitstream

/// The NAL units that came while the codec was still unknown, kept so that the first picture is
/// not lost once parameter sets name the codec (ITU-T H.264 §7.4.1.2.1 and H.265 §7.4.2.4.4
/// order them before the slices that use them).
///
/// Bounded twice: at most ``maxUnits`` units and ``maxBytes`` bytes, the newest kept. A unit over
/// the byte cap on its own is never kept. Garbage that never names a codec (a flood of random
/// datagrams, which the Annex B scanner cuts into "units" of up to `--max-au-mb`) used to keep
/// 256 such units, one of them 21 MB, for as long as the feed ran (issue 17).
struct UnitsBeforeCodec {
    /// Units kept at most.
    static let maxUnits = 256
    /// Bytes kept at most (a 4K IDR picture's slices fit).
    static let maxBytes = 8 << 20

    private(set) var units: [NALUnit] = []
    /// Bytes of the units kept.
    private(set) var bytes = 0
    /// Units let go (the oldest, past a cap, or forgotten), for the whole run.
    private(set) var dropped = 0

    var isEmpty: Bool { units.isEmpty }

    /// Keeps `unit`, letting the oldest go while a cap is exceeded.
    mutating func append(_ unit: NALUnit) {
        guard unit.bytes.count <= Self.maxBytes else { dropped += 1; return }
        units.append(unit)
        bytes += unit.bytes.count
        var over = 0
        var overBytes = 0
        while units.count - over > Self.maxUnits || bytes - overBytes > Self.maxBytes {
            overBytes += units[over].bytes.count
            over += 1
        }
        guard over > 0 else { return }
        units.removeFirst(over)
        bytes -= overBytes
        dropped += over
    }

    /// Hands over every unit kept and empties itself.
    mutating func take() -> [NALUnit] {
        defer { units = []; bytes = 0 }
        return units
    }

    /// Lets every unit go and gives back the storage (a feed gone silent).
    mutating func forget() {
        dropped += units.count
        units = []
        bytes = 0
    }
}
