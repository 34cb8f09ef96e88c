extension FetchPredicate {
    /// Replaces `$name` variables with values.
    ///
    /// ```swift
    /// let template = try FetchPredicate("year >= $from AND year <= $to")
    /// let nineties = try template.substituting(["from": 1990, "to": 1999])
    /// ```
    /// - Throws: `.invalidRequest` naming a variable that has no value.
    public func substituting(_ variables: [String: any PredicateArgumentConvertible]) throws(StoreChainError)
        -> FetchPredicate
    {
        let arguments = variables.mapValues(\.predicateArgument)
        return try map { expression throws(StoreChainError) in
            guard case .variable(let name) = expression else { return expression }
            guard let argument = arguments[name] else {
                throw StoreChainError(
                    .invalidRequest, "variable $\(name) has no value",
                    suggestion: Suggestion.closest(to: name, in: arguments.keys).map { "did you mean '\($0)'?" }
                        ?? "pass a value for '\(name)' to substituting(_:)")
            }
            return argument.expression
        }
    }

    /// The names of the `$variables` the predicate uses.
    public var variables: Set<String> {
        var names: Set<String> = []
        func collect(_ expression: Operand) {
            switch expression {
            case .variable(let name): names.insert(name)
            case .array(let elements): elements.forEach(collect)
            default: break
            }
        }
        forEachComparison { comparison in
            collect(comparison.lhs)
            collect(comparison.rhs)
        }
        return names
    }

    /// Every key path the predicate reads, as components; an aggregate's is its collection
    /// followed by its property (`albums.@sum.price` gives `albums.price`).
    package var keyPaths: [[String]] {
        var paths: [[String]] = []
        forEachComparison { comparison in
            for operand in [comparison.lhs, comparison.rhs] {
                switch operand {
                case .keyPath(let components): paths.append(components)
                case .aggregate(_, let collection, let property): paths.append(collection + property)
                default: break
                }
            }
        }
        return paths
    }

    /// Calls `body` for every comparison, depth first.
    package func forEachComparison(_ body: (Comparison) -> Void) {
        switch self {
        case .true, .false: break
        case .and(let operands), .or(let operands):
            for operand in operands { operand.forEachComparison(body) }
        case .not(let operand): operand.forEachComparison(body)
        case .comparison(let comparison): body(comparison)
        }
    }

    /// A copy with every comparison's expressions transformed.
    func map(_ transform: (Operand) throws(StoreChainError) -> Operand) throws(StoreChainError) -> FetchPredicate {
        func mapExpression(_ expression: Operand) throws(StoreChainError) -> Operand {
            if case .array(let elements) = expression {
                var mapped: [Operand] = []
                for element in elements { mapped.append(try mapExpression(element)) }
                return .array(mapped)
            }
            return try transform(expression)
        }
        switch self {
        case .true, .false: return self
        case .and(let operands):
            var mapped: [FetchPredicate] = []
            for operand in operands { mapped.append(try operand.map(transform)) }
            return .and(mapped)
        case .or(let operands):
            var mapped: [FetchPredicate] = []
            for operand in operands { mapped.append(try operand.map(transform)) }
            return .or(mapped)
        case .not(let operand): return .not(try operand.map(transform))
        case .comparison(var comparison):
            comparison.lhs = try mapExpression(comparison.lhs)
            comparison.rhs = try mapExpression(comparison.rhs)
            return .comparison(comparison)
        }
    }
}

extension FetchPredicate {
    /// The keys a predicate that asks for objects by key names (`id == 3`, `id IN {1, 2}`,
    /// either side), or `nil` when it asks anything else.
    package func keys(of entity: EntityDescription) -> [Value]? {
        guard case .comparison(let comparison) = self, comparison.modifier == .direct, comparison.options.isEmpty
        else { return nil }
        let key = Operand.keyPath([entity.key])
        let other: Operand
        switch comparison.op {
        case .equal where comparison.lhs == key: other = comparison.rhs
        case .equal where comparison.rhs == key: other = comparison.lhs
        case .in where comparison.lhs == key: other = comparison.rhs
        default: return nil
        }
        switch other {
        case .constant(let value) where !value.isNull: return [value]
        case .array(let elements):
            var values: [Value] = []
            for element in elements {
                guard case .constant(let value) = element, !value.isNull else { return nil }
                values.append(value)
            }
            return values
        default: return nil
        }
    }
}
