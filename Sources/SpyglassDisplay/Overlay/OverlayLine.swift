/// One line of an on-screen overlay, with the tone it is drawn in.
public struct OverlayLine: Equatable, Sendable {
    /// How a line reads at a glance: the colour it is drawn in.
    public enum Tone: Equatable, Sendable {
        /// Plain facts (light grey).
        case plain
        /// Within the target (green).
        case good
        /// Over the target, under 1.5 times it; or loss seen (amber).
        case warning
        /// 1.5 times the target or more; or no picture for the stall time (red).
        case bad
        /// Stale: true once, no longer (mid grey), as telemetry older than 2 s.
        case stale

        /// The RGB colour of the tone: light on a dark box, readable over bright pictures.
        public var rgb: (r: UInt8, g: UInt8, b: UInt8) {
            switch self {
            case .plain: return (235, 235, 235)
            case .good: return (90, 220, 110)
            case .warning: return (255, 190, 60)
            case .bad: return (255, 90, 80)
            case .stale: return (150, 150, 150)
            }
        }

        /// The tone of a latency figure against a target: good up to it, warning to 1.5 times, bad beyond.
        public static func of(millis: Double, target: Double) -> Tone {
            millis <= target ? .good : millis < 1.5 * target ? .warning : .bad
        }
    }

    public var text: String
    public var tone: Tone

    public init(_ text: String, _ tone: Tone = .plain) {
        self.text = text
        self.tone = tone
    }
}
