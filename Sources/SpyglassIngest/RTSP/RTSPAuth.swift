import CFFmpeg
import Foundation

/// HTTP authentication for RTSP (RFC 2326 §D.2, RFC 2617): Basic and Digest (MD5, with or
/// without `qop=auth`).
package struct RTSPAuth {
    enum Scheme { case basic, digest }
    let scheme: Scheme
    let realm: String
    let nonce: String
    let qop: String?
    let opaque: String?
    private var nc = 0

    /// Parses a `WWW-Authenticate` header; Digest is preferred when both are offered.
    init?(challenges: [String]) {
        let digest = challenges.first { $0.lowercased().hasPrefix("digest") }
        let basic = challenges.first { $0.lowercased().hasPrefix("basic") }
        guard let text = digest ?? basic else { return nil }
        let p = Self.parameters(text)
        scheme = digest != nil ? .digest : .basic
        realm = p["realm"] ?? ""
        nonce = p["nonce"] ?? ""
        qop = p["qop"].flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("auth") ? "auth" : nil }
        opaque = p["opaque"]
    }

    /// `key="value"` pairs of a challenge.
    static func parameters(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        guard let space = text.firstIndex(of: " ") else { return out }
        var rest = text[text.index(after: space)...]
        while let eq = rest.firstIndex(of: "=") {
            let key = rest[..<eq].trimmingCharacters(in: CharacterSet(charactersIn: " ,")).lowercased()
            rest = rest[rest.index(after: eq)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = String(rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[end...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            out[key] = value
        }
        return out
    }

    /// The `Authorization` header value for one request.
    mutating func authorization(method: String, uri: String, user: String, password: String) -> String {
        switch scheme {
        case .basic:
            return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        case .digest:
            let ha1 = Self.md5("\(user):\(realm):\(password)")
            let ha2 = Self.md5("\(method):\(uri)")
            var header = "Digest username=\"\(user)\", realm=\"\(realm)\", nonce=\"\(nonce)\", uri=\"\(uri)\""
            if let qop {
                nc += 1
                let ncText = String(format: "%08x", nc)
                let cnonce = String(format: "%08x", UInt32.random(in: 0...UInt32.max))
                header += ", response=\"\(Self.md5("\(ha1):\(nonce):\(ncText):\(cnonce):\(qop):\(ha2)"))\", qop=\(qop), nc=\(ncText), cnonce=\"\(cnonce)\""
            } else {
                header += ", response=\"\(Self.md5("\(ha1):\(nonce):\(ha2)"))\""
            }
            if let opaque { header += ", opaque=\"\(opaque)\"" }
            return header
        }
    }

    /// Lower-case hex MD5 of a string (libavutil's `av_md5_sum`).
    static func md5(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { av_md5_sum(&digest, $0.baseAddress, Int($0.count)) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
