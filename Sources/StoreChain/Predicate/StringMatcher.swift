import Foundation

/// String comparison with NSPredicate's options. Strings compare by Unicode scalar (as
/// NSString's literal comparison and SQLite's BINARY collation do); `[c]` lowercases and `[d]`
/// removes diacritics from both sides first.
struct StringMatcher: Sendable {
    let options: Comparison.Options

    init(_ options: Comparison.Options) {
        self.options = options
    }

    /// The form of `string` that comparisons under these options see.
    func fold(_ string: String) -> String {
        if options.contains(.diacriticInsensitive) {
            let folding: String.CompareOptions =
                options.contains(.caseInsensitive)
                ? [.diacriticInsensitive, .caseInsensitive] : [.diacriticInsensitive]
            let folded = string.folding(options: folding, locale: nil)
            return options.contains(.caseInsensitive) ? folded.lowercased() : folded
        }
        return options.contains(.caseInsensitive) ? string.lowercased() : string
    }

    static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// Orders by Unicode scalar value (the same order as UTF-8 bytes).
    static func compare(_ a: String, _ b: String) -> Int {
        let contiguous = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in compareBytes(left, right) }
        }
        if let result = contiguous ?? nil { return result }
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?) where x != y: return x < y ? -1 : 1
            default: continue
            }
        }
    }

    /// `compare` over the UTF-8 bytes of two native strings, with one `memcmp`.
    private static func compareBytes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(left.count, right.count)
        if common > 0, let leftBase = left.baseAddress, let rightBase = right.baseAddress {
            let result = memcmp(leftBase, rightBase, common)
            if result != 0 { return result < 0 ? -1 : 1 }
        }
        return left.count == right.count ? 0 : left.count < right.count ? -1 : 1
    }

    static func beginsWith(_ a: String, _ prefix: String) -> Bool {
        a.utf8.starts(with: prefix.utf8)
    }

    /// Whether the folded `string` begins with `prefix`, an ASCII string already folded. While
    /// the string's bytes are ASCII, lowercasing maps each to one ASCII byte, so they are
    /// compared as they are read; a non-ASCII byte within the prefix's length folds the whole
    /// string instead.
    func beginsWith(_ string: String, lowercasedASCIIPrefix prefix: String) -> Bool {
        var bytes = string.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = bytes.next() else { return false }
            guard byte < 0x80 else { return Self.beginsWith(fold(string), prefix) }
            let lowered = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            if lowered != expected { return false }
        }
        return true
    }

    static func endsWith(_ a: String, _ suffix: String) -> Bool {
        let count = suffix.utf8.count
        return a.utf8.count >= count && a.utf8.suffix(count).elementsEqual(suffix.utf8)
    }

    static func contains(_ a: String, _ part: String) -> Bool {
        part.isEmpty || a.utf8.firstRange(of: part.utf8) != nil
    }

    /// `LIKE`: `*` matches any run of characters, `?` exactly one; the whole string must match.
    static func like(_ string: String, pattern: String) -> Bool {
        let text = Array(string.unicodeScalars)
        let pattern = Array(pattern.unicodeScalars)
        var t = 0
        var p = 0
        var starPattern = -1
        var starText = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t])) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                starPattern = p
                starText = t
                p += 1
            } else if starPattern >= 0 {
                p = starPattern + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    /// Checks that a `MATCHES` pattern is a valid regular expression.
    static func checkRegex(_ pattern: String) throws(StoreChainError) {
        do {
            _ = try Regex(pattern)
        } catch {
            throw StoreChainError(
                .typeMismatch, "MATCHES pattern \"\(pattern)\" is not a valid regular expression",
                underlying: error)
        }
    }
}
