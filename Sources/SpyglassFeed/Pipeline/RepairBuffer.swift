/// The access units decoded since the last IDR/IRAP picture, kept so that a NAL unit found cut
/// after its picture was decoded can be put back whole and everything since re-decoded.
///
/// Bounded in bytes and in count: beyond either, it holds nothing until the next IDR/IRAP, and
/// a cut in that stretch stays what it was (damage flagged until a clean join).
import SpyglassBitstream
import SpyglassPipeline
public struct RepairBuffer {
    /// Caps: bytes held (default 64 MiB) and access units held (default 600, 20 s at 30 fps).
    public let maxBytes: Int
    public let maxCount: Int
    private var held: [AccessUnit] = []
    private var bytes = 0
    private var valid = false
    /// The newest access unit index the last one held stands for: its own, or that of the last
    /// fragment put back in it (a picture split twice has two).
    private var newestIndex: Int?

    /// - Parameters:
    ///   - maxBytes: most bytes kept.
    ///   - maxCount: most access units kept.
    public init(maxBytes: Int = 64 << 20, maxCount: Int = 600) {
        self.maxBytes = maxBytes
        self.maxCount = maxCount
    }

    /// Access units held now.
    public var count: Int { held.count }

    /// Keeps an access unit that went to the decoder (as it went: before damage was inherited).
    public mutating func keep(_ au: AccessUnit) {
        if au.isRandomAccessPoint {
            held.removeAll(keepingCapacity: true)
            bytes = 0
            valid = true
        }
        guard valid else { return }
        if held.count >= maxCount || bytes + au.byteCount > maxBytes {
            held.removeAll()
            bytes = 0
            valid = false
            return
        }
        held.append(au)
        bytes += au.byteCount
        newestIndex = au.index
    }

    /// What ``replace(_:endingAt:)`` changed.
    public struct Replacement {
        /// The access units to decode again, from the IDR/IRAP to the newest.
        public var accessUnits: [AccessUnit]
        /// Where in ``accessUnits`` the one that now holds the whole unit is.
        public var repairedAt: Int
        /// The access unit that now holds the whole unit.
        public var repaired: AccessUnit { accessUnits[repairedAt] }
    }

    /// Puts `unit` in place of the unit that ended at `micros`.
    /// - Returns: the access units to decode again and which of them changed, or nil when the
    ///   cut unit is not held (too old, beyond the caps, or before the first IDR/IRAP).
    public mutating func replace(_ unit: NALUnit, endingAt micros: UInt64) -> Replacement? {
        for i in held.indices.reversed() {
            // The cut unit is the last one its flush passed on: other units of the same read end
            // at the same time, so it is the last of them.
            guard let k = held[i].units.lastIndex(where: { $0.lastByteMicros == micros }) else { continue }
            guard let whole = unit.parsed(as: held[i].codec) else { return nil }
            bytes += whole.bytes.count - held[i].units[k].bytes.count
            held[i].units[k] = whole
            held[i].damaged = held[i].units.contains { $0.damaged }
            return Replacement(accessUnits: held, repairedAt: i)
        }
        return nil
    }

    /// Puts a fragment (``AccessUnit/isSplitFragment``) back in the picture it was split off,
    /// the access unit held last (the one just before it, or with the fragments before it).
    /// - Returns: the access units to decode again and which of them changed, or nil when the
    ///   access unit before the fragment is not the one held last (not decoded, or not held).
    public mutating func merge(_ fragment: AccessUnit) -> Replacement? {
        guard let i = held.indices.last, newestIndex == fragment.index - 1, held[i].codec == fragment.codec else { return nil }
        held[i].append(fragment: fragment)
        bytes += fragment.byteCount
        newestIndex = fragment.index
        return Replacement(accessUnits: held, repairedAt: i)
    }

    /// Forgets everything (a sender restart, a codec change).
    public mutating func reset() {
        held.removeAll()
        bytes = 0
        valid = false
        newestIndex = nil
    }
}
