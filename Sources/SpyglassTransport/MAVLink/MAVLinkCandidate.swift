/// The verdict on the bytes held from a magic byte on: a frame, a reason to drop it, or how
/// many bytes it needs before it can be judged. Stateless, so any cut of the input gives the
/// same verdicts. (MAVLink serialization, https://mavlink.io/en/guide/serialization.html)
enum Candidate {
    /// Why a candidate is dropped; each has its counter in ``MAVLinkParser/Counters``.
    enum Reason { case incompatFlags, unknownMessage, length, crc, truncated }

    case needs(Int)
    case bad(Reason)
    /// A checked frame; `longer`: a MAVLink 2 payload longer than the dialect's message.
    case frame(MAVLinkFrame, longer: Bool)

    /// Judges `b`, which starts with a magic byte.
    static func examine(_ b: [UInt8], _ dialect: MAVLinkDialect) -> Candidate {
        let v2 = b[0] == MAVLinkFrame.magicV2
        let headerLength = v2 ? 10 : 6
        guard b.count >= headerLength else { return .needs(headerLength) }
        let length = Int(b[1])
        let flags = v2 ? b[2] : 0
        guard flags & ~MAVLinkFrame.flagSigned == 0 else { return .bad(.incompatFlags) }
        let id = v2 ? UInt32(b[7]) | UInt32(b[8]) << 8 | UInt32(b[9]) << 16 : UInt32(b[5])
        guard let message = dialect[id] else { return .bad(.unknownMessage) }
        // MAVLink 1 has no truncation or extensions on the wire: a longer length is damage.
        // MAVLink 2 may carry extension fields newer than the dialect (pymavlink and the C
        // library accept those and ignore the extra bytes), so only the CRC judges it.
        guard v2 || length <= message.length else { return .bad(.length) }
        let crcAt = headerLength + length
        let signed = flags & MAVLinkFrame.flagSigned != 0
        let total = crcAt + 2 + (signed ? MAVLinkFrame.signatureLength : 0)
        guard b.count >= total else { return .needs(total) }
        let crc = b.withUnsafeBufferPointer {
            MAVLinkCRC.checksum(UnsafeBufferPointer(rebasing: $0[1..<crcAt]), extra: message.crcExtra)
        }
        guard crc == UInt16(b[crcAt]) | UInt16(b[crcAt + 1]) << 8 else { return .bad(.crc) }
        var payload: [UInt8] = []
        payload.reserveCapacity(max(length, message.length))
        payload += b[headerLength..<crcAt]
        payload += repeatElement(0, count: max(0, message.length - length))
        let frame = MAVLinkFrame(version: v2 ? 2 : 1, sequence: b[v2 ? 4 : 2], systemID: b[v2 ? 5 : 3],
                                 componentID: b[v2 ? 6 : 4], messageID: id, payload: payload, signed: signed,
                                 raw: Array(b[0..<total]))
        return .frame(frame, longer: length > message.length)
    }
}

extension MAVLinkParser.Counters {
    /// Counts a dropped candidate under its reason.
    mutating func count(_ reason: Candidate.Reason) {
        switch reason {
        case .incompatFlags: badIncompatFlags += 1
        case .unknownMessage: unknownMessages += 1
        case .length: badLengths += 1
        case .crc: crcErrors += 1
        case .truncated: truncatedFrames += 1
        }
    }
}
