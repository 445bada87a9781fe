/// The parts of a file path that recordings are named by, without `NSString` (whose
/// `deletingLastPathComponent` trapped on a one-character name, `--record b`, in Swift 6.3's
/// Foundation).
public enum FilePath {
    /// The folder of `path`: what comes before its last `/` ("" for none, "/" for the root).
    public static func folder(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path` (after its last `/`).
    public static func name(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// The extension of `path`'s last component, lower-cased, without its dot ("" for none; a
    /// name that starts with its only dot, `.hidden`, has none).
    public static func fileExtension(_ path: String) -> String {
        let n = name(path)
        guard let dot = n.lastIndex(of: "."), dot != n.startIndex else { return "" }
        return n[n.index(after: dot)...].lowercased()
    }

    /// The last component without its extension.
    public static func stem(_ path: String) -> String {
        let n = name(path)
        guard let dot = n.lastIndex(of: "."), dot != n.startIndex else { return n }
        return String(n[..<dot])
    }
}
