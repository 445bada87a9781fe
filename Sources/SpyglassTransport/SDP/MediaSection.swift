/// One media description of an SDP: an `m=` line and the attributes up to the next one
/// (RFC 8866 §5.14), as an RTSP server's DESCRIBE answer lists its tracks.
public struct MediaSection: Sendable, Equatable {
    /// The media type of the `m=` line: "video", "audio", "application" …
    public var media: String
    /// The encoding name of its `a=rtpmap` (`H264`, `H265`, `MP2T` …), nil without one.
    public var encodingName: String?
    /// Its `a=control` URL, absolute or relative to the session's (RFC 2326 §C.1.1), nil without one.
    public var control: String?
    /// The section's lines, the `m=` line first.
    public var lines: [String]

    /// What Spyglass reads from the section: payload type, codec and parameter sets.
    public var description: SessionDescription { SessionDescription(text: lines.joined(separator: "\n")) }

    /// The sections of SDP text, in order; session-level lines before the first `m=` are not part
    /// of any. Lines end with LF or CR LF.
    public static func sections(in text: String) -> [MediaSection] {
        var sections: [MediaSection] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("m=") {
                let media = line.dropFirst(2).split(separator: " ").first.map(String.init) ?? ""
                sections.append(MediaSection(media: media, encodingName: nil, control: nil, lines: [line]))
                continue
            }
            guard !sections.isEmpty else { continue }
            let i = sections.count - 1
            sections[i].lines.append(line)
            if line.hasPrefix("a=rtpmap:"), sections[i].encodingName == nil {
                sections[i].encodingName = line.split(separator: " ").dropFirst().first?.split(separator: "/").first.map(String.init)
            } else if line.hasPrefix("a=control:") {
                sections[i].control = String(line.dropFirst("a=control:".count))
            }
        }
        return sections
    }
}
