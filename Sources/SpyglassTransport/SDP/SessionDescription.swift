import Foundation
import SpyglassBitstream

/// What Spyglass takes from an SDP file (RFC 8866): the video payload type, the codec from
/// `a=rtpmap`, and parameter sets from `a=fmtp` (`sprop-parameter-sets`, RFC 6184 §8.1;
/// `sprop-vps`/`sprop-sps`/`sprop-pps`, RFC 7798 §7.1), and whether the sender takes Full Intra
/// Requests (`a=rtcp-fb:PT ccm fir`, RFC 5104 §7.1).
public struct SessionDescription: Sendable, Equatable {
    /// The video payload type (`m=video … PT`, or the `a=rtpmap` line's), 0...127.
    public var payloadType: UInt8?
    /// The codec `a=rtpmap` names (H264; H265 or HEVC). A hint: the stream's own parameter sets
    /// overrule it (``AccessUnitStage``, ``RTPReceiver``).
    public var codec: VideoCodec?
    /// Parameter-set NAL units (headers included), VPS first.
    public var parameterSets: [[UInt8]] = []
    /// The video payload type (or `*`) is offered `a=rtcp-fb:… ccm fir` (RFC 5104 §7.1): keyframe
    /// requests are FIRs from the first one.
    public var offersFIR = false
    /// The header extension that carries capture times (`a=extmap:ID URI`, RFC 8285 §5) for
    /// RFC 6051's NTP-64 or WebRTC's abs-capture-time; NTP-64 when both are offered.
    public var captureTimeExtension: CaptureTimeExtension?

    /// The parameter sets that belong to `codec`, judged by each unit's own header (an H.265
    /// VPS/SPS/PPS header, ITU-T H.265 Table 7-1; an H.264 SPS/PPS, ITU-T H.264 Table 7-1), so that
    /// an SDP naming the wrong codec cannot hand its `sprop-*` sets to the other codec's decoder.
    public func parameterSets(for codec: VideoCodec) -> [[UInt8]] {
        parameterSets.filter { Self.codec(ofParameterSet: $0) == codec }
    }

    /// The codec whose parameter-set header `unit` has, or nil for neither.
    static func codec(ofParameterSet unit: [UInt8]) -> VideoCodec? {
        guard unit.count >= 2, unit[0] & 0x80 == 0 else { return nil }
        // H.265: types 32...34 with nuh_layer_id 0 (0x40/0x42/0x44, then 0x01...0x07). Their first
        // byte reads as an H.264 type 0, 2 or 4, never a parameter set.
        if [0x40, 0x42, 0x44].contains(unit[0]) && (1...7).contains(unit[1]) { return .h265 }
        // H.264: SPS (7) or PPS (8) with nal_ref_idc ≠ 0.
        if [7, 8].contains(unit[0] & 0x1F) && unit[0] >> 5 != 0 { return .h264 }
        return nil
    }

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
        var firFor: Set<String> = []
        defer { offersFIR = firFor.contains("*") || payloadType.map { firFor.contains(String($0)) } ?? false }
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
            } else if line.hasPrefix("a=extmap:") {
                // a=extmap:<value>["/"<direction>] <URI> [<extensionattributes>]
                let parts = line.dropFirst("a=extmap:".count).split(separator: " ")
                guard parts.count >= 2, let id = parts[0].split(separator: "/").first.flatMap({ Int($0) }),
                      let kind = CaptureTimeExtension.Kind(rawValue: String(parts[1])),
                      captureTimeExtension?.kind != .ntp64 else { continue }
                captureTimeExtension = CaptureTimeExtension(kind: kind, id: id) ?? captureTimeExtension
            } else if line.hasPrefix("a=rtcp-fb:") {
                let parts = line.dropFirst("a=rtcp-fb:".count).split(separator: " ").map { $0.lowercased() }
                if parts.count >= 3 && parts[1] == "ccm" && parts[2] == "fir" { firFor.insert(parts[0]) }
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
