import Foundation

/// One line about a running feed for a terminal or a log (headless `play`): its state, the
/// pictures shown per second, the age of the last one and glass-to-glass.
public enum FeedStatusLine {
    /// The line, e.g. "2 cam2 · live · 29.9 fps · age 0.03 s · g2g p50 84 ms".
    /// - Parameters:
    ///   - feed: the feed's number, from 1.
    ///   - name: its label.
    ///   - state: its pipeline's state.
    ///   - fps: pictures shown per second since the last line.
    ///   - ageSeconds: the age of the last picture shown, s (nil before the first).
    ///   - glassToGlassP50Millis: the glass-to-glass median so far, ms (nil without capture stamps).
    public static func text(feed: Int, name: String, state: PipelineState, fps: Double, ageSeconds: Double?,
                            glassToGlassP50Millis: Double?) -> String {
        var parts = ["\(feed) \(name)", state.label, String(format: "%.1f fps", fps)]
        if let age = ageSeconds { parts.append(String(format: "age %.2f s", age)) }
        if let g2g = glassToGlassP50Millis { parts.append(String(format: "g2g p50 %.0f ms", g2g)) }
        return parts.joined(separator: " · ")
    }
}
