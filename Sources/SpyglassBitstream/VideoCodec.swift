/// The two video codecs Spyglass receives.
public enum VideoCodec: String, Sendable, CaseIterable {
    /// ITU-T H.264 / MPEG-4 AVC.
    case h264
    /// ITU-T H.265 / HEVC.
    case h265

    /// Human name for logs and the window title.
    public var displayName: String { self == .h264 ? "H.264" : "H.265" }
    /// File extension a recording of this codec gets.
    public var fileExtension: String { rawValue }
}
