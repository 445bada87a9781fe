/// "Did you mean …?" for a mistyped command or option: the closest known word by edit distance
/// (Levenshtein: insertions, deletions and substitutions each cost 1), or, first, the shortest
/// known word the typed one is a prefix of.
public enum Suggestion {
    /// `" (did you mean X?)"` for the candidate closest to `word`, or `""` when none is close: an
    /// edit distance of at most max(2, a third of the candidate's length), or `word` is a prefix of it.
    public static func didYouMean(_ word: String, among candidates: [String]) -> String {
        // A candidate the word begins (--stall → --stall-ms) before the nearest by edit distance.
        if word.count > 3, let prefixed = candidates.filter({ $0.hasPrefix(word) }).min(by: { $0.count < $1.count }) {
            return " (did you mean \(prefixed)?)"
        }
        guard !word.isEmpty,
              let (best, d) = candidates.map({ ($0, editDistance(word, $0)) }).min(by: { $0.1 < $1.1 }),
              d <= max(2, best.count / 3) || best.hasPrefix(word) else { return "" }
        return " (did you mean \(best)?)"
    }

    /// Every `--option` a usage text names, in order, without repeats.
    public static func options(in usage: String) -> [String] {
        var seen: Set<String> = []
        var out: [String] = []
        for token in usage.split(whereSeparator: { " \n\t[]|(),=".contains($0) }) where token.hasPrefix("--") && token.count > 2 {
            let option = String(token)
            if seen.insert(option).inserted { out.append(option) }
        }
        return out
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
