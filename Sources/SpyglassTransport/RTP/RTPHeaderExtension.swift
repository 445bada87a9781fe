/// An RTP header extension (RFC 3550 §5.3.1) read as RFC 8285's general mechanism: the one-byte
/// form (profile 0xBEDE; each element a 4-bit id and a 4-bit length − 1) or the two-byte form
/// (profile 0x100X; an 8-bit id and an 8-bit length). Elements are looked up by the id that the
/// SDP's `a=extmap` (or `--rtp-ext`) gave their URI.
public struct RTPHeaderExtension: Sendable, Equatable {
    /// The 16-bit profile ("defined by profile") field.
    public let profile: UInt16
    /// The extension's data: 4 × its length field bytes, after the 4-byte header.
    public let data: ArraySlice<UInt8>

    /// - Parameters:
    ///   - profile: the profile field.
    ///   - data: the bytes after the extension header.
    public init(profile: UInt16, data: ArraySlice<UInt8>) {
        self.profile = profile
        self.data = data
    }

    /// The data of element `id` (RFC 8285 §4.2, §4.3), or nil when the extension is of another
    /// profile, has no such element, or its elements run past its end (a malformed one: nothing
    /// of it is trusted). Id 0 is padding; in the one-byte form id 15 ends the walk (§4.2).
    /// - Parameter id: 1...14 in the one-byte form, 1...255 in the two-byte form.
    public func element(id: Int) -> ArraySlice<UInt8>? {
        let oneByte = profile == 0xBEDE
        guard oneByte || profile & 0xFFF0 == 0x1000, id > 0 else { return nil }
        var i = data.startIndex
        var found: ArraySlice<UInt8>?
        while i < data.endIndex {
            let elementID: Int, length: Int
            if oneByte {
                elementID = Int(data[i] >> 4)
                if elementID == 0 { i += 1; continue }   // padding byte
                if elementID == 15 { break }
                length = Int(data[i] & 0x0F) + 1
                i += 1
            } else {
                elementID = Int(data[i])
                if elementID == 0 { i += 1; continue }   // padding byte
                guard i + 1 < data.endIndex else { return nil }
                length = Int(data[i + 1])
                i += 2
            }
            guard i + length <= data.endIndex else { return nil }
            if elementID == id && found == nil { found = data[i..<(i + length)] }
            i += length
        }
        return found
    }
}

/// A header extension that carries each picture's capture time, and the id it has in a session.
///
/// - `urn:ietf:params:rtp-hdrext:ntp-64` (RFC 6051 §3.3): the 64-bit NTP timestamp of the
///   sampling instant, as GStreamer's `rtphdrextntp64` writes it (from the buffer's NTP
///   reference time; all zeros when the sender had none).
/// - `http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time` (WebRTC): the capture
///   time as 64-bit NTP (UQ32.32), optionally followed by an estimated clock offset (8 bytes)
///   that is not used.
public struct CaptureTimeExtension: Sendable, Equatable {
    /// Which extension.
    public enum Kind: String, Sendable, Equatable {
        case ntp64 = "urn:ietf:params:rtp-hdrext:ntp-64"
        case absCaptureTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"
    }
    /// The extension.
    public let kind: Kind
    /// Its element id in this session, 1...255.
    public let id: Int

    /// - Parameters:
    ///   - kind: the extension.
    ///   - id: its id, 1...255 (nil outside).
    public init?(kind: Kind, id: Int) {
        guard (1...255).contains(id) else { return nil }
        self.kind = kind
        self.id = id
    }

    /// `ID=URI` as `--rtp-ext` takes it (`3=urn:ietf:params:rtp-hdrext:ntp-64`); the short
    /// names `ntp-64` and `abs-capture-time` stand for the URIs. Nil for anything else.
    public init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let id = Int(parts[0]) else { return nil }
        let uri = String(parts[1])
        let kind = Kind(rawValue: uri) ?? ["ntp-64": .ntp64, "abs-capture-time": .absCaptureTime][uri.lowercased()]
        guard let kind else { return nil }
        self.init(kind: kind, id: id)
    }

    /// The capture time in `ext`, µs since the Unix epoch: nil when the element is missing, too
    /// short, zero (no time), or before 1970. After 2036 (NTP era 1, top bit clear) it counts on
    /// (RFC 4330 §3).
    public func captureWallMicros(in ext: RTPHeaderExtension) -> UInt64? {
        guard let e = ext.element(id: id), e.count >= 8 else { return nil }
        var ntp: UInt64 = 0
        for b in e.prefix(8) { ntp = ntp << 8 | UInt64(b) }
        guard ntp != 0 else { return nil }
        let seconds = SenderClock.eraSeconds(ntp), fraction = ntp & 0xFFFF_FFFF
        let unixOffset: UInt64 = 2_208_988_800   // 1900 to 1970, RFC 5905 §6
        guard seconds >= unixOffset else { return nil }
        // To the nearest µs: a sender that wrote µs through ns rounded down (GStreamer) reads back exact.
        return (seconds - unixOffset) * 1_000_000 + (fraction * 1_000_000 + (1 << 31)) >> 32
    }
}
