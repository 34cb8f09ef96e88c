/// "Did you mean …?" for names typed by people: the closest candidate by edit distance.
package enum Suggestion {
    /// The candidate closest to `name`, if one is close enough to be a likely typo.
    package static func closest(to name: String, in candidates: some Sequence<String>) -> String? {
        let lowered = name.lowercased()
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let allowed = max(1, min(3, name.count / 3))
        return best.distance <= allowed ? best.candidate : nil
    }

    /// `did you mean 'x'?`, or a list of what is valid when nothing is close.
    package static func didYouMean(_ name: String, in candidates: [String]) -> String {
        if let match = closest(to: name, in: candidates) { return "did you mean '\(match)'?" }
        let sorted = candidates.sorted()
        if sorted.isEmpty { return "there is nothing to choose from here" }
        return "expected one of: " + sorted.joined(separator: ", ")
    }

    /// Levenshtein distance counting an adjacent transposition as one edit.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
