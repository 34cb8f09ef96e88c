import StoreChain

/// Which conjuncts of a predicate a binding can push, with what value, and whether the backend
/// then applies exactly that conjunct or returns more (filtered in memory afterwards).
extension QueryPlanner {
    /// One condition joined by AND at the top of a predicate: a comparison, or a comparison's
    /// negation (`NOT name IN {…}`).
    struct Conjunct: Sendable, Hashable {
        let comparison: Comparison
        let negated: Bool

        var predicate: FetchPredicate { negated ? .not(.comparison(comparison)) : .comparison(comparison) }

        /// The values a `!=`, `NOT … ==` or `NOT … IN` leaves out; nil for any other conjunct.
        var excluded: [Operand]? {
            switch (negated, comparison.op, comparison.rhs) {
            case (false, .notEqual, let value), (true, .equal, let value): [value]
            case (true, .in, .array(let elements)): elements
            default: nil
            }
        }
    }

    /// The top-level conjuncts of a predicate: the comparisons and negated comparisons joined
    /// by AND.
    static func conjuncts(of predicate: FetchPredicate?) -> [Conjunct] {
        switch predicate {
        case .comparison(let comparison)?: [Conjunct(comparison: comparison, negated: false)]
        case .not(.comparison(let comparison))?: [Conjunct(comparison: comparison, negated: true)]
        case .and(let operands)?: operands.flatMap { conjuncts(of: $0) }
        case .or(let operands)?: oneOf(operands).map { [$0] } ?? []
        default: []
        }
    }

    /// `a == 1 OR a == 2 OR a IN {3, 4}` as the one conjunct `a IN {1, 2, 3, 4}`, which a one-of
    /// binding serves: equalities and memberships of one key path with the same options, against
    /// values none of which is nil; `nil` for any other OR.
    static func oneOf(_ operands: [FetchPredicate]) -> Conjunct? {
        var first: Comparison?
        var values: [Operand] = []
        var pending = operands
        while let operand = pending.popLast() {
            if case .or(let nested) = operand {
                pending += nested
                continue
            }
            guard case .comparison(let comparison) = operand, comparison.modifier == .direct,
                case .keyPath = comparison.lhs,
                first.map({ $0.lhs == comparison.lhs && $0.options == comparison.options }) ?? true
            else { return nil }
            first = first ?? comparison
            switch (comparison.op, comparison.rhs) {
            case (.equal, .constant(let value)) where value != .null: values.insert(comparison.rhs, at: 0)
            case (.in, .array(let elements)):
                guard elements.allSatisfy({ if case .constant(let value) = $0 { value != .null } else { false } })
                else { return nil }
                values.insert(contentsOf: elements, at: 0)
            default: return nil
            }
        }
        guard let first, operands.count > 1 else { return nil }
        return Conjunct(comparison: Comparison(first.lhs, .in, .array(values), options: first.options), negated: false)
    }

    /// The ORs joined by AND at the top of a predicate that are no one-of (`a == 1 OR b == 2`),
    /// which a filter expression with OR can take whole.
    static func disjunctions(of predicate: FetchPredicate?) -> [FetchPredicate] {
        switch predicate {
        case .or(let operands)? where oneOf(operands) == nil: [.or(operands)]
        case .and(let operands)?: operands.flatMap { disjunctions(of: $0) }
        default: []
        }
    }

    /// Whether a predicate is conjuncts joined by AND (so its conjuncts are all of it), or,
    /// with `orsAllowed`, conjuncts and disjunctions.
    static func isConjunction(_ predicate: FetchPredicate?, orsAllowed: Bool = false) -> Bool {
        switch predicate {
        case .comparison?, .not(.comparison)?: true
        case .and(let operands)?: operands.allSatisfy { isConjunction($0, orsAllowed: orsAllowed) }
        case .or(let operands)?: orsAllowed || oneOf(operands) != nil
        default: false
        }
    }

    /// Whether the backend's filter for `binding` matches exactly what `conjunct` does (given
    /// that `bind` took it).
    static func isExact(_ binding: ParameterBinding, _ conjunct: Conjunct) -> Bool {
        let comparison = conjunct.comparison
        guard binding.caseInsensitive == comparison.options.contains(.caseInsensitive),
            !comparison.options.contains(.diacriticInsensitive),
            !binding.caseInsensitive || binding.caseFolding == .unicode
                || (foldsAlikeInASCII(comparison.rhs) && !holdsLikeWildcards(comparison.rhs))
        else { return false }
        if binding.operation == .isNull { return true }
        if let excluded = conjunct.excluded {
            return binding.operation == .notOneOf || (binding.operation == .notEqual && excluded.count == 1)
        }
        guard !conjunct.negated else { return false }
        let op = comparison.op
        return switch binding.operation {
        case .equal: op == .equal
        case .beginsWith: op == .beginsWith
        case .endsWith: op == .endsWith
        case .contains: op == .contains
        case .atLeast: op == .greaterOrEqual
        case .atMost: op == .lessOrEqual
        case .greater: op == .greater
        case .less: op == .less
        case .oneOf: op == .equal || op == .in
        case .notEqual, .notOneOf, .isNull: false
        }
    }

    /// The values a binding takes from a conjunct, when the backend's filter keeps at least what
    /// the conjunct does (so nothing that matches is lost): one value, or the list a one-of or
    /// not-one-of sends; an is-null binding takes `true` or `false`.
    func bind(_ binding: ParameterBinding, to conjunct: Conjunct) -> (Conjunct, [Value])? {
        let comparison = conjunct.comparison
        guard comparison.modifier == .direct, case .keyPath(let components) = comparison.lhs,
            components.joined(separator: ".") == binding.keyPath
        else { return nil }
        let folds = comparison.options
        switch binding.operation {
        case .isNull:
            guard !conjunct.negated, case .constant(let value) = comparison.rhs, value.isNull, folds.isEmpty else {
                return nil
            }
            return comparison.op == .equal
                ? (conjunct, [.bool(true)]) : comparison.op == .notEqual ? (conjunct, [.bool(false)]) : nil
        case .notEqual, .notOneOf:
            // The backend leaves out what it finds equal, so it may fold no more than the
            // comparison; and its SQL `<>` leaves out the records without a value too.
            guard let excluded = conjunct.excluded, binding.operation == .notOneOf || excluded.count == 1,
                neverNil.contains(binding.keyPath), !binding.caseInsensitive || folds.contains(.caseInsensitive)
            else { return nil }
            let values = excluded.compactMap(Self.constant)
            return values.count == excluded.count && !values.isEmpty ? (conjunct, values) : nil
        default:
            break
        }
        // The backend keeps what it finds matching, so it must fold at least as much as the comparison.
        guard !conjunct.negated, !folds.contains(.diacriticInsensitive),
            binding.caseInsensitive || !folds.contains(.caseInsensitive)
        else { return nil }
        let op = comparison.op
        if folds.contains(.caseInsensitive), binding.caseFolding == .ascii {
            guard [.equal, .in, .beginsWith, .endsWith, .contains].contains(op), Self.foldsAlikeInASCII(comparison.rhs)
            else { return nil }
        }
        let rhs = Self.constant(comparison.rhs)
        func element(_ index: Int) -> Value? {
            guard case .array(let elements) = comparison.rhs, elements.count > index else { return nil }
            return Self.constant(elements[index])
        }
        let value: Value?
        switch binding.operation {
        case .equal: value = op == .equal ? rhs : nil
        case .beginsWith: value = [.beginsWith, .equal].contains(op) ? rhs : nil
        case .endsWith: value = [.endsWith, .equal].contains(op) ? rhs : nil
        case .contains: value = [.contains, .beginsWith, .endsWith, .equal].contains(op) ? rhs : nil
        case .greater: value = op == .greater ? rhs : nil
        case .less: value = op == .less ? rhs : nil
        case .atLeast:
            value = [.greaterOrEqual, .greater, .equal].contains(op) ? rhs : (op == .between ? element(0) : nil)
        case .atMost: value = [.lessOrEqual, .less, .equal].contains(op) ? rhs : (op == .between ? element(1) : nil)
        case .oneOf:
            if op == .in, case .array(let elements) = comparison.rhs {
                let values = elements.compactMap(Self.constant)
                return values.count == elements.count && !values.isEmpty ? (conjunct, values) : nil
            }
            value = op == .equal ? rhs : nil
        case .notEqual, .notOneOf, .isNull: value = nil
        }
        return value.map { (conjunct, [$0]) }
    }

    /// A constant operand's value; nil for nil and for anything not a constant.
    static func constant(_ operand: Operand) -> Value? {
        guard case .constant(let value) = operand, !value.isNull else { return nil }
        return value
    }

    /// Whether a string holds `%` or `_`, which a backend's `LIKE` reads as wildcards unless it
    /// escapes them (Django does, Datasette does not): a filter with one keeps more than asked.
    static func holdsLikeWildcards(_ operand: Operand) -> Bool {
        let values: [Operand] = if case .array(let elements) = operand { elements } else { [operand] }
        return values.contains { value in
            guard case .constant(.string(let text)) = value else { return false }
            return text.contains("%") || text.contains("_")
        }
    }

    /// Whether a backend that folds ASCII letters only matches a `[c]` comparison with these
    /// strings exactly as Unicode folding does: they are ASCII, and hold no `i` or `k`, the only
    /// ASCII letters that other characters lowercase to (U+0130 `İ` → `i̇`, U+212A KELVIN SIGN →
    /// `k`; `FilterOperationTests` checks every scalar). A match of such a string can then only
    /// cover ASCII characters of the record, which both foldings lowercase alike.
    static func foldsAlikeInASCII(_ operand: Operand) -> Bool {
        let values: [Operand] = if case .array(let elements) = operand { elements } else { [operand] }
        return values.allSatisfy { value in
            guard case .constant(.string(let text)) = value else { return true }
            return text.unicodeScalars.allSatisfy { $0.isASCII && !"ikIK".unicodeScalars.contains($0) }
        }
    }
}
