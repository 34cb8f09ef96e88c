import Foundation

/// A Foundation predicate expression kind StoreChain can convert.
protocol ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm
}

extension PredicateExpressions.Variable: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .path(try conversion.path(of: key, in: self))
    }
}

extension PredicateExpressions.Value: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard let constant = PredicateConversion.constant(value) else {
            throw PredicateConversion.unsupported(self, "\(Output.self) is not a value a predicate can hold")
        }
        return constant
    }
}

extension PredicateExpressions.KeyPath: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard case .path(let path) = try conversion.term(root) else {
            throw PredicateConversion.unsupported(self, "it reads a property of something other than a model object")
        }
        if let fields = Root.Output.self as? any ModelFields.Type {
            guard let name = fields.modelName(for: keyPath) else {
                throw PredicateConversion.unsupported(
                    self, "it reads a property of \(Root.Output.self) that is not in the model")
            }
            return .path(path.appending(name))
        }
        switch (Root.Output.self as? any ModelFieldsCollection.Type)?.aggregate(for: keyPath) {
        case .count:
            return .count(path)
        case .isEmpty:
            return .predicate(
                .comparison(
                    Comparison(
                        .aggregate(.count, collection: path.components, property: []), .equal, .constant(.integer(0)))))
        case nil:
            throw PredicateConversion.unsupported(
                self,
                "it reads a property of \(Root.Output.self) (giving \(Output.self)) that is not in the model; only "
                    + "attributes, relationships and a to-many relationship's count and isEmpty can be read")
        }
    }
}

extension PredicateExpressions.Conjunction: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(try conversion.predicate(lhs) && conversion.predicate(rhs))
    }
}

extension PredicateExpressions.Disjunction: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(try conversion.predicate(lhs) || conversion.predicate(rhs))
    }
}

extension PredicateExpressions.Negation: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(!(try conversion.predicate(wrapped)))
    }
}

extension PredicateExpressions.Equal: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(try conversion.comparison(conversion.term(lhs), .equal, conversion.term(rhs), in: self))
    }
}

extension PredicateExpressions.NotEqual: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        let (left, right) = (try conversion.term(lhs), try conversion.term(rhs))
        if case .optionalPredicate = left {
            return .predicate(!(try conversion.comparison(left, .equal, right, in: self)))
        }
        return .predicate(try conversion.comparison(left, .notEqual, right, in: self))
    }
}

extension PredicateExpressions.Comparison: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        let op: StoreChain.Comparison.Operator =
            switch self.op {
            case .lessThan: .less
            case .lessThanOrEqual: .lessOrEqual
            case .greaterThan: .greater
            case .greaterThanOrEqual: .greaterOrEqual
            }
        return .predicate(try conversion.comparison(conversion.term(lhs), op, conversion.term(rhs), in: self))
    }
}

extension PredicateExpressions.SequenceStartsWith: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(try conversion.comparison(conversion.term(base), .beginsWith, conversion.term(prefix), in: self))
    }
}

extension PredicateExpressions.CollectionContainsCollection: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .predicate(try conversion.comparison(conversion.term(base), .contains, conversion.term(other), in: self))
    }
}

extension PredicateExpressions.SequenceContains: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard case .constants(let values) = try conversion.term(sequence) else {
            throw PredicateConversion.unsupported(self, "only a constant array can be searched (IN)")
        }
        guard let (path, fallback) = try conversion.testedValue(element) else {
            throw PredicateConversion.unsupported(self, "it does not search for a key path's value")
        }
        let test = try conversion.compare(path, .in, .array(values.map(Operand.constant)), in: self)
        return .predicate(conversion.coalescing(path, fallback.map(values.contains), test))
    }
}

extension PredicateExpressions.RangeExpressionContains: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard case .range(let low, let high, let closed) = try conversion.term(range) else {
            throw PredicateConversion.unsupported(self, "only a range of constants can be tested")
        }
        guard let (path, fallback) = try conversion.testedValue(element) else {
            throw PredicateConversion.unsupported(self, "it does not test a key path's value")
        }
        let test =
            closed
            ? try conversion.compare(path, .between, .array([.constant(low), .constant(high)]), in: self)
            : try conversion.compare(path, .greaterOrEqual, .constant(low), in: self)
                && conversion.compare(path, .less, .constant(high), in: self)
        // `(300...600).contains($0.seconds ?? 0)`: whether a missing value is in the range is
        // decided here, once.
        var fallbackInRange: Bool?
        if let fallback {
            let above = try PredicateConversion.holds(fallback, .greaterOrEqual, low)
            let below = try PredicateConversion.holds(fallback, closed ? .lessOrEqual : .less, high)
            fallbackInRange = above && below
        }
        return .predicate(conversion.coalescing(path, fallbackInRange, test))
    }
}

extension PredicateExpressions.ClosedRange: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        try conversion.range(lower, upper, closed: true, in: self)
    }
}

extension PredicateExpressions.Range: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        try conversion.range(lower, upper, closed: false, in: self)
    }
}

extension PredicateExpressions.SequenceContainsWhere: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        try conversion.quantified(.any, over: sequence, element: variable.key, test: test, in: self)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        try conversion.quantified(.all, over: sequence, element: variable.key, test: test, in: self)
    }
}

/// `$0.band?.country`, `if let year = $0.year { … }`: the value behind the optional is the same
/// key path; a test reached through it remembers the optional, for `?? false` and `== true`.
extension PredicateExpressions.OptionalFlatMap: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard case .path(let path) = try conversion.term(wrapped) else {
            throw PredicateConversion.unsupported(self, "it unwraps something other than a key path")
        }
        conversion.bind(variable.key, to: path)
        switch try conversion.term(transform) {
        case .predicate(let predicate): return .optionalPredicate(predicate, guard: path)
        case let term: return term
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        guard case .path(let path) = try conversion.term(inner) else {
            throw PredicateConversion.unsupported(self, "it unwraps something other than a key path")
        }
        return .path(path)
    }
}

extension PredicateExpressions.NilLiteral: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        .constant(.null)
    }
}

/// `$0.year ?? 0` compared with a value, and `optional?.test() ?? false`.
extension PredicateExpressions.NilCoalesce: ConvertibleExpression {
    func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
        switch (try conversion.term(lhs), try conversion.term(rhs)) {
        case (.path(let path), .constant(let fallback)):
            return .coalesced(path, default: fallback)
        case (.optionalPredicate(let predicate, let guardPath), .constant(.bool(let fallback))):
            return .predicate(
                fallback
                    ? PredicateConversion.missing(guardPath) || predicate
                    : PredicateConversion.nonNil(guardPath, and: predicate))
        default:
            throw PredicateConversion.unsupported(
                self, "only a key path ?? a constant, or an optional test ?? true or false, converts")
        }
    }
}

#if canImport(Darwin)
    /// `$0.name.localizedStandardContains("sigur")` (Apple platforms): `CONTAINS[cd]`.
    extension PredicateExpressions.StringLocalizedStandardContains: ConvertibleExpression {
        func convert(_ conversion: inout PredicateConversion) throws(StoreChainError) -> PredicateTerm {
            .predicate(
                try conversion.comparison(
                    conversion.term(root), .contains, conversion.term(other),
                    options: [.caseInsensitive, .diacriticInsensitive], in: self))
        }
    }
#endif
