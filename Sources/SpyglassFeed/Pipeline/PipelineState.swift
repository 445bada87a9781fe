/// Where a feed is in its life. The window badge, the title and the summary read it.
public enum PipelineState: Equatable, Sendable {
    /// Started; no byte has arrived yet.
    case waitingForData
    /// Data arrives, no picture has been decoded yet (parameter sets, a join point).
    case waitingForPicture
    /// Pictures are being decoded.
    case live
    /// The source connects by itself and has not reached its sender yet (a camera down when the
    /// feed started, or one that went away and is not back): why the last attempt failed.
    case connecting(String)
    /// A byte-stream sender went away; the source reconnects or waits for the next one.
    case reconnecting
    /// The input ended, the frame limit or the no-data timeout was reached, or it was stopped.
    case ended
    /// The feed cannot go on: the reason, one line.
    case failed(String)

    /// A word or two for a title or a badge.
    public var label: String {
        switch self {
        case .waitingForData: return "waiting for data"
        case .waitingForPicture: return "waiting for a picture"
        case .live: return "live"
        case .connecting(let why): return "connecting: \(why)"
        case .reconnecting: return "reconnecting"
        case .ended: return "ended"
        case .failed(let why): return "failed: \(why)"
        }
    }
}

/// What a pipeline tells its owner as it happens (on the pipeline's thread).
public enum PipelineEvent: Sendable {
    /// The state changed.
    case state(PipelineState)
    /// The codec became known or changed ("H.264", "H.265").
    case codec(String)
}
