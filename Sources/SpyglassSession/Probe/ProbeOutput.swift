import Foundation

/// What `spyglass probe` prints: the stream's text (its label, an RTSP camera's SDP lines, the
/// probe) and a MAVLink input's summary after it; or with `--json` one object, the stream's
/// report with the MAVLink summary as its `mavlink` member (or only `{"mavlink": …}` when there
/// is no stream).
public enum ProbeOutput {
    /// - Parameters: outcome: the stream's probe (nil: none); telemetry: the MAVLink input
    ///   (nil: none), finished here; json: one JSON object.
    /// - Throws: an encoding error (none expected).
    public static func text(_ outcome: ProbeRun.Outcome?, telemetry: TelemetryProbe?, json: Bool) throws -> String {
        let mavlink = telemetry?.finish()
        guard json else {
            var lines: [String] = []
            if let o = outcome { lines += [o.label] + o.sdpLines + [o.probe.text] }
            if let m = mavlink { lines += m.lines }
            return lines.joined(separator: "\n")
        }
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        var object: [String: Any] = [:]
        if let o = outcome, let video = try JSONSerialization.jsonObject(with: enc.encode(o.probe.report)) as? [String: Any] { object = video }
        if let m = mavlink { object["mavlink"] = try JSONSerialization.jsonObject(with: enc.encode(m.report)) }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
