import Foundation

extension Value {
    /// Equality as predicates see it: numbers compare by value across integer, double and
    /// decimal; strings compare by Unicode scalar; `nil` equals only `nil`.
    package static func predicateEqual(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)): return StringMatcher.equal(x, y)
        case (.integer(let x), .integer(let y)): return x == y
        case (.decimal(let x), .decimal(let y)): return x == y
        default:
            if let x = a.numericValue, let y = b.numericValue { return x == y }
            return a == b
        }
    }

    /// Order as predicates and sorts see it: -1, 0 or 1, or `nil` when either side is `nil` or
    /// the values have no common order.
    package static func predicateCompare(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.string(let x), .string(let y)): return StringMatcher.compare(x, y)
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.decimal(let x), .decimal(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.uuid(let x), .uuid(let y)): return StringMatcher.compare(x.uuidString, y.uuidString)
        case (.url(let x), .url(let y)): return StringMatcher.compare(x.absoluteString, y.absoluteString)
        default:
            guard let x = a.numericValue, let y = b.numericValue, !x.isNaN, !y.isNaN else { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }

    /// A total order for sorting: `nil` first, then by `predicateCompare`; values of different
    /// kinds (which a validated request never mixes) order by kind.
    static func sortCompare(_ a: Value, _ b: Value) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        default:
            if let result = predicateCompare(a, b) { return result }
            return StringMatcher.compare(a.type?.rawValue ?? "", b.type?.rawValue ?? "")
        }
    }
}
