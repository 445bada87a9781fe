#if canImport(Glibc)
import Glibc
#endif

/// An address range for `--allow-from ADDR[/PREFIX]`: IPv4 or IPv6, prefix length in bits
/// (default: the whole address).
public struct AddressPrefix: Equatable, Sendable, CustomStringConvertible {
    /// Network-order address bytes (4 or 16).
    public let bytes: [UInt8]
    /// Leading bits of ``bytes`` that must match, 0...32 (IPv4) or 0...128 (IPv6) (RFC 4632 §3.1,
    /// RFC 4291 §2.3).
    public let prefixLength: Int

    /// Parses "192.168.1.0/24", "10.0.0.7", "fd00::/8". Returns nil when it is not an address.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let addrText = parts.first else { return nil }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(addrText), &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(addrText), &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
        if parts.count == 2 {
            guard let p = Int(parts[1]), p >= 0, p <= bytes.count * 8 else { return nil }
            prefixLength = p
        } else {
            prefixLength = bytes.count * 8
        }
    }

    /// True when `address` (network-order bytes) is inside this range. IPv4-mapped IPv6
    /// addresses (::ffff:a.b.c.d) match IPv4 ranges.
    public func contains(_ address: [UInt8]) -> Bool {
        var a = address
        if bytes.count == 4 && a.count == 16 && a[0..<10].allSatisfy({ $0 == 0 }) && a[10] == 0xFF && a[11] == 0xFF {
            a = Array(a[12...])
        }
        guard a.count == bytes.count else { return false }
        var bits = prefixLength
        for i in 0..<a.count where bits > 0 {
            let take = min(8, bits)
            let mask: UInt8 = take == 8 ? 0xFF : ~(0xFF >> UInt8(take))
            if a[i] & mask != bytes[i] & mask { return false }
            bits -= take
        }
        return true
    }

    /// True when the address is a multicast group: 224.0.0.0/4 for IPv4 (RFC 5771 §2), ff00::/8
    /// for IPv6 (RFC 4291 §2.7). Only the address is looked at, not the prefix length.
    public var isMulticast: Bool {
        bytes.count == 4 ? (bytes[0] & 0xF0) == 0xE0 : bytes[0] == 0xFF
    }

    /// The address bytes of a `sockaddr_in`/`sockaddr_in6`.
    static func addressBytes(_ storage: UnsafeRawPointer) -> [UInt8] {
        let family = storage.assumingMemoryBound(to: sockaddr.self).pointee.sa_family
        if Int32(family) == AF_INET {
            let sin = storage.assumingMemoryBound(to: sockaddr_in.self).pointee
            return withUnsafeBytes(of: sin.sin_addr) { Array($0) }
        }
        if Int32(family) == AF_INET6 {
            let sin6 = storage.assumingMemoryBound(to: sockaddr_in6.self).pointee
            return withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
        }
        return []
    }

    /// "ADDR/PREFIX" as `inet_ntop(3)` writes the address, e.g. "192.168.1.0/24", "fd00::/8".
    public var description: String {
        var buf = [CChar](repeating: 0, count: 64)
        _ = bytes.withUnsafeBytes { inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, $0.baseAddress, &buf, 64) }
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/\(prefixLength)"
    }
}
