import Foundation

/// Where the `p` key writes a screenshot: `FOLDER/spyglass-NAME-YYYYMMDD-HHMMSS.mmmZ.png`, NAME the
/// feed's name (or `wall`) with each run of anything but letters, digits, `-` and `_` made one `-`
/// (`udp://:5600` → `udp-5600`, `Front door` → `Front-door`; 60 characters at most),
/// the time in UTC to the millisecond, so that screenshots sort by time and never overwrite.
public enum ScreenshotName {
    /// The path for a screenshot of `name` taken now, in `folder`.
    public static func path(folder: String, name: String, at date: Date = Date()) -> String {
        let safe = String(safeName(name).prefix(60))
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss.SSS"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        let file = "spyglass-\(safe.isEmpty ? "feed" : safe)-\(f.string(from: date))Z.png"
        // Not NSString's appendingPathComponent: it traps on a one-character folder ("p") in Swift 6.3.
        return folder.isEmpty ? file : folder.hasSuffix("/") ? folder + file : folder + "/" + file
    }

    /// Letters, digits, `-` and `_` kept; every other run one `-`, none at either end.
    static func safeName(_ name: String) -> String {
        var out = ""
        var gap = false
        for c in name {
            if c.isLetter || c.isNumber || c == "_" || c == "-" {
                if gap && !out.isEmpty { out.append("-") }
                gap = false
                out.append(c)
            } else {
                gap = true
            }
        }
        return out
    }
}
