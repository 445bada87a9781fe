import Foundation

/// Where the `p` key writes a screenshot: `FOLDER/spyglass-NAME-YYYYMMDD-HHMMSS.mmmZ.png`, NAME the
/// feed's name (or `wall`) with anything but letters, digits, `-` and `_` made `_` (60 at most),
/// the time in UTC to the millisecond, so that screenshots sort by time and never overwrite.
public enum ScreenshotName {
    /// The path for a screenshot of `name` taken now, in `folder`.
    public static func path(folder: String, name: String, at date: Date = Date()) -> String {
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }.prefix(60))
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss.SSS"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        return (folder as NSString).appendingPathComponent("spyglass-\(safe)-\(f.string(from: date))Z.png")
    }
}
