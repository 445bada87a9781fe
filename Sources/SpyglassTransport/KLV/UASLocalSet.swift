/// What a drone says about itself in a MISB ST 0601 UAS Datalink Local Set (the KLV of STANAG
/// 4609 feeds): when the picture was taken and where the platform was.
public struct PlatformMetadata: Equatable, Sendable, Codable {
    /// Precision Time Stamp (tag 2): µs since 1970-01-01 UTC (MISB ST 0603).
    public var precisionTimeMicros: UInt64?
    /// Platform heading angle (tag 5), degrees 0...360 from true north.
    public var headingDegrees: Double?
    /// Sensor latitude (tag 13), degrees −90...90 (WGS-84).
    public var latitudeDegrees: Double?
    /// Sensor longitude (tag 14), degrees −180...180 (WGS-84).
    public var longitudeDegrees: Double?
    /// Sensor true altitude (tag 15), metres −900...19,000 above mean sea level.
    public var altitudeMeters: Double?

    public init(precisionTimeMicros: UInt64? = nil, headingDegrees: Double? = nil, latitudeDegrees: Double? = nil,
                longitudeDegrees: Double? = nil, altitudeMeters: Double? = nil) {
        self.precisionTimeMicros = precisionTimeMicros
        self.headingDegrees = headingDegrees
        self.latitudeDegrees = latitudeDegrees
        self.longitudeDegrees = longitudeDegrees
        self.altitudeMeters = altitudeMeters
    }

    /// "47.123456, 8.654321, 1234 m, heading 90.0°" with what is known.
    public var positionText: String? {
        var parts: [String] = []
        if let la = latitudeDegrees, let lo = longitudeDegrees { parts.append(String(format: "%.6f, %.6f", la, lo)) }
        if let a = altitudeMeters { parts.append(String(format: "%.0f m", a)) }
        if let h = headingDegrees { parts.append(String(format: "heading %.1f°", h)) }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}

/// MISB ST 0601 UAS Datalink Local Set: its key, and the tags Spyglass reads (2, 5, 13, 14, 15),
/// with the checksum (tag 1) checked when present.
public enum UASLocalSet {
    /// The local set's 16-byte universal label (MISB ST 0601 §6.2).
    public static let key: [UInt8] = [0x06, 0x0E, 0x2B, 0x34, 0x02, 0x0B, 0x01, 0x01,
                                      0x0E, 0x01, 0x03, 0x01, 0x01, 0x00, 0x00, 0x00]

    /// Decodes one local set.
    /// - Parameter packet: a KLV packet whose key is ``key``.
    /// - Returns: what it says, or nil when an item runs past the end or the checksum (tag 1,
    ///   ST 0601 §6.3: 16-bit sum of the packet up to the checksum value) does not match.
    public static func decode(_ packet: KLV.Packet) -> PlatformMetadata? {
        guard packet.key.elementsEqual(key) else { return nil }
        var m = PlatformMetadata()
        let v = packet.value
        var i = v.startIndex
        while i < v.endIndex {
            guard let (tag, afterTag) = KLV.berOID(v, at: i), let (length, start) = KLV.berLength(v, at: afterTag),
                  length <= v.endIndex - start else { return nil }
            let value = v[start..<(start + length)]
            if tag == 1 {
                guard length == 2, checksum(packet.bytes[..<start]) == UInt16(value.first!) << 8 | UInt16(value.last!) else { return nil }
            } else {
                read(tag, value, into: &m)
            }
            i = start + length
        }
        return m
    }

    /// One item's value into the metadata (ST 0601 tags 2, 5, 13, 14, 15; others are skipped).
    private static func read(_ tag: Int, _ value: ArraySlice<UInt8>, into m: inout PlatformMetadata) {
        let raw = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch (tag, value.count) {
        case (2, 8): m.precisionTimeMicros = raw
        case (5, 2): m.headingDegrees = Double(raw) * 360 / 65_535
        case (13, 4): m.latitudeDegrees = signed(raw, range: 180)
        case (14, 4): m.longitudeDegrees = signed(raw, range: 360)
        case (15, 2): m.altitudeMeters = Double(raw) * 19_900 / 65_535 - 900
        default: break
        }
    }

    /// An int32 mapped onto ±range/2 (ST 0601 tags 13, 14); 0x80000000 is "reported error".
    private static func signed(_ raw: UInt64, range: Double) -> Double? {
        let v = Int32(bitPattern: UInt32(raw))
        return v == Int32.min ? nil : Double(v) * range / 4_294_967_294
    }

    /// The ST 0601 checksum: a 16-bit sum of the bytes as big-endian words.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var sum: UInt16 = 0
        for (k, b) in bytes.enumerated() { sum &+= UInt16(b) << (k % 2 == 0 ? 8 : 0) }
        return sum
    }

    /// A local set with the given fields and its checksum, as a UAS sends it.
    public static func encode(_ m: PlatformMetadata) -> [UInt8] {
        var items: [UInt8] = []
        func item(_ tag: UInt8, _ value: UInt64, bytes: Int) {
            items += [tag, UInt8(bytes)] + (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(bytes - 1 - $0))) }
        }
        if let t = m.precisionTimeMicros { item(2, t, bytes: 8) }
        if let h = m.headingDegrees { item(5, UInt64((h / 360 * 65_535).rounded()), bytes: 2) }
        if let la = m.latitudeDegrees { item(13, UInt64(UInt32(bitPattern: Int32((la / 180 * 4_294_967_294).rounded()))), bytes: 4) }
        if let lo = m.longitudeDegrees { item(14, UInt64(UInt32(bitPattern: Int32((lo / 360 * 4_294_967_294).rounded()))), bytes: 4) }
        if let a = m.altitudeMeters { item(15, UInt64(((a + 900) / 19_900 * 65_535).rounded()), bytes: 2) }
        items += [1, 2]
        let head = key + KLV.encodeLength(items.count + 2)
        let sum = checksum((head + items)[...])
        return head + items + [UInt8(sum >> 8), UInt8(sum & 0xFF)]
    }
}
