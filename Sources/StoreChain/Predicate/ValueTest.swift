/// The test one comparison operator applies to a pair of (already folded) values.

enum ValueTest {
    typealias Test = @Sendable (Value, Value) -> Bool

    static func make(_ comparison: Comparison, matcher: StringMatcher) throws(StoreChainError) -> Test {
        switch comparison.op {
        case .equal: return { Value.predicateEqual($0, $1) }
        case .notEqual: return { !Value.predicateEqual($0, $1) }
        case .less: return { (Value.predicateCompare($0, $1) ?? 0) < 0 }
        case .lessOrEqual: return { Value.predicateCompare($0, $1).map { $0 <= 0 } ?? false }
        case .greater: return { (Value.predicateCompare($0, $1) ?? 0) > 0 }
        case .greaterOrEqual: return { Value.predicateCompare($0, $1).map { $0 >= 0 } ?? false }
        case .beginsWith: return strings(StringMatcher.beginsWith)
        case .endsWith: return strings(StringMatcher.endsWith)
        case .contains: return strings(StringMatcher.contains)
        case .like: return strings { StringMatcher.like($0, pattern: $1) }
        case .matches: return try regex(comparison, matcher: matcher)
        case .in:
            let members = constants(comparison.rhs).map(matcher.foldValue)
            return { value, _ in members.contains { Value.predicateEqual(value, $0) } }
        case .between:
            let bounds = constants(comparison.rhs).map(matcher.foldValue)
            guard bounds.count == 2 else { return { _, _ in false } }
            let (low, high) = (bounds[0], bounds[1])
            return { value, _ in
                guard let above = Value.predicateCompare(value, low), let below = Value.predicateCompare(value, high)
                else { return false }
                return above >= 0 && below <= 0
            }
        }
    }

    private static func strings(_ test: @escaping @Sendable (String, String) -> Bool) -> Test {
        { lhs, rhs in
            guard case .string(let left) = lhs, case .string(let right) = rhs else { return false }
            return test(left, right)
        }
    }

    private static func regex(_ comparison: Comparison, matcher: StringMatcher) throws(StoreChainError) -> Test {
        guard case .constant(.string(let pattern)) = comparison.rhs else {
            throw StoreChainError(.typeMismatch, "MATCHES needs a string pattern on the right")
        }
        let folded = comparison.options.contains(.diacriticInsensitive) ? matcher.fold(pattern) : pattern
        let shared = try SharedRegex(folded, ignoresCase: comparison.options.contains(.caseInsensitive))
        return { lhs, _ in
            guard case .string(let text) = lhs else { return false }
            return shared.wholeMatches(text)
        }
    }

    private static func constants(_ expression: Operand) -> [Value] {
        guard case .array(let elements) = expression else { return [] }
        return elements.compactMap {
            if case .constant(let value) = $0 { return value }
            return nil
        }
    }
}

/// A compiled regular expression shared by concurrent evaluations. `Regex` is not `Sendable`
/// (it compiles its program lazily), so every use goes through a mutex.
private final class SharedRegex: Sendable {
    private let regex: Locked<Regex<AnyRegexOutput>>

    init(_ pattern: String, ignoresCase: Bool) throws(StoreChainError) {
        do {
            regex = Locked(try Regex(pattern).ignoresCase(ignoresCase))
        } catch {
            throw StoreChainError(
                .typeMismatch, "MATCHES pattern \"\(pattern)\" is not a valid regular expression",
                underlying: error)
        }
    }

    func wholeMatches(_ text: String) -> Bool {
        regex.withLock { (try? $0.wholeMatch(in: text)) != nil }
    }
}
