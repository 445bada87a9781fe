import Foundation

/// What Spyglass takes from an SDP file (RFC 8866): the video payload type, the codec from
/// `a=rtpmap`, and parameter sets from `a=fmtp` (`sprop-parameter-sets`, RFC 6184 §8.1;
/// `sprop-vps`/`sprop-sps`/`sprop-pps`, RFC 7798 §7.1).
public struct SessionDescription: Sendable, Equatable {
    public var payloadType: UInt8?
    public var codec: VideoCodec?
    /// Parameter-set NAL units (headers included), VPS first.
    public var parameterSets: [[UInt8]] = []

    /// Errors reading an SDP.
    public enum SDPError: Error, CustomStringConvertible {
        case unreadable(String)
        case noVideo(String)
        public var description: String {
            switch self {
            case .unreadable(let s): return "\(s): cannot read SDP"
            case .noVideo(let s): return "\(s): no H.264/H.265 video in the SDP"
            }
        }
    }

    /// Parses SDP text.
    public init(text: String) {
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("m=video") {
                let parts = line.split(separator: " ")
                if parts.count >= 4, let pt = UInt8(parts[3]) { payloadType = payloadType ?? pt }
            } else if line.hasPrefix("a=rtpmap:") {
                let body = line.dropFirst("a=rtpmap:".count)
                let parts = body.split(separator: " ")
                guard parts.count >= 2 else { continue }
                let name = parts[1].split(separator: "/").first?.uppercased() ?? ""
                if name == "H264" { codec = .h264; payloadType = UInt8(parts[0]) ?? payloadType }
                if name == "H265" || name == "HEVC" { codec = .h265; payloadType = UInt8(parts[0]) ?? payloadType }
            } else if line.hasPrefix("a=fmtp:") {
                guard let space = line.firstIndex(of: " ") else { continue }
                for param in line[line.index(after: space)...].split(separator: ";") {
                    let kv = param.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                    guard kv.count == 2 else { continue }
                    let key = kv[0].lowercased(), value = String(kv[1])
                    switch key {
                    case "sprop-parameter-sets":
                        for b64 in value.split(separator: ",") { if let d = Data(base64Encoded: String(b64)) { parameterSets.append([UInt8](d)) } }
                    case "sprop-vps", "sprop-sps", "sprop-pps":
                        for b64 in value.split(separator: ",") { if let d = Data(base64Encoded: String(b64)) { parameterSets.append([UInt8](d)) } }
                    default: break
                    }
                }
            }
        }
    }

    /// Reads an SDP file. Throws ``SDPError``.
    public init(path: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw SDPError.unreadable(path) }
        self.init(text: text)
        guard codec != nil || payloadType != nil else { throw SDPError.noVideo(path) }
    }
}
