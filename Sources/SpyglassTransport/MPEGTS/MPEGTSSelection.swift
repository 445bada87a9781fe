/// Which program or video stream of an MPEG-TS to play: `?program=N` (a `program_number` of
/// the PAT, ISO/IEC 13818-1 §2.4.4.3) or `?pid=N` (an elementary PID of a PMT, §2.4.4.8) on
/// the source URL. Without either, the first program with an H.264/H.265 stream is played.
public struct MPEGTSSelection: Equatable, Sendable {
    /// `program_number` wanted, or nil.
    public var program: Int?
    /// Elementary PID wanted (0...8190), or nil.
    public var pid: Int?

    public init(program: Int? = nil, pid: Int? = nil) {
        self.program = program
        self.pid = pid
    }

    /// Why a selection in a URL cannot be used.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case badValue(String)
        /// `program=` or `pid=` given twice in one URL.
        case repeated(String)
        public var description: String {
            switch self {
            case .badValue(let s): return "bad MPEG-TS selection '\(s)' (expected program=1-65535 or pid=16-8190)"
            case .repeated(let key): return "MPEG-TS selection '\(key)=' given twice: give one program and at most one pid"
            }
        }
    }

    /// Splits `program=`/`pid=` items off a URL's query (`udp://:5600?pid=256&iface=eth0`, or a
    /// file path `clip.ts?program=2`).
    /// - Returns: the text without them (the query dropped when nothing else is in it), and the
    ///   selection (nil when the text names none).
    /// - Throws: ``ParseError/badValue(_:)`` for a value out of range, ``ParseError/repeated(_:)``
    ///   for a key given twice. Both keys at once select the PID within that program.
    public static func split(_ text: String) throws -> (rest: String, selection: MPEGTSSelection?) {
        guard let q = text.lastIndex(of: "?") else { return (text, nil) }
        var selection = MPEGTSSelection()
        var kept: [Substring] = []
        for item in text[text.index(after: q)...].split(separator: "&") {
            if item.hasPrefix("program=") {
                guard let n = Int(item.dropFirst(8)), (1...65_535).contains(n) else { throw ParseError.badValue(String(item)) }
                guard selection.program == nil else { throw ParseError.repeated("program") }
                selection.program = n
            } else if item.hasPrefix("pid=") {
                guard let n = Int(item.dropFirst(4)), (16...8190).contains(n) else { throw ParseError.badValue(String(item)) }
                guard selection.pid == nil else { throw ParseError.repeated("pid") }
                selection.pid = n
            } else {
                kept.append(item)
            }
        }
        guard selection != MPEGTSSelection() else { return (text, nil) }
        let base = String(text[..<q])
        return (kept.isEmpty ? base : base + "?" + kept.joined(separator: "&"), selection)
    }

    /// The selection as a query (`program=2&pid=256`).
    public var query: String {
        [program.map { "program=\($0)" }, pid.map { "pid=\($0)" }].compactMap { $0 }.joined(separator: "&")
    }
}
