import StoreChain

/// An OR of comparisons on different key paths (`composer == nil OR milliseconds < 60000`),
/// pushed whole to a backend whose filter expression has OR (OData's `or`).
extension QueryPlanner {
    /// `disjunction` as a part of one of `endpoint`'s filter expressions (that expression's
    /// variable, and the text), when that expression has OR and each comparison of each operand
    /// is one a part of it writes exactly: the backend then keeps exactly what the OR does.
    func written(_ disjunction: FetchPredicate, by endpoint: RemoteEndpoint) -> (expression: String, text: String)? {
        guard case .or(let operands) = disjunction else { return nil }
        let parts = endpoint.expressionParts.filter { $0.value.spelling.or != nil }
            .sorted { ($0.key.count, $0.key) < ($1.key.count, $1.key) }
        var expression: String?
        var spelling: FilterGrammar.Expression?
        var texts: [String] = []
        for operand in Self.flattened(operands) {
            let conjuncts = Self.conjuncts(of: operand)
            guard Self.isConjunction(operand), !conjuncts.isEmpty else { return nil }
            var written: [String] = []
            for conjunct in conjuncts {
                let found = parts.lazy.compactMap { variable, part -> (FilterGrammar.Part, [Value])? in
                    guard expression == nil || part.expression == expression, let binding = endpoint.bind[variable],
                        let (_, values) = self.bind(binding, to: conjunct), Self.isExact(binding, conjunct)
                    else { return nil }
                    return (part, values)
                }.first
                guard let (part, values) = found else { return nil }
                expression = part.expression
                spelling = part.spelling
                written.append(part.written(values))
            }
            let and = spelling?.and ?? " and "
            texts.append(written.count > 1 ? "(" + written.joined(separator: and) + ")" : written[0])
        }
        guard let expression, let or = spelling?.or else { return nil }
        return (expression, "(" + texts.joined(separator: or) + ")")
    }

    /// The operands of an OR with those of the ORs nested in it.
    private static func flattened(_ operands: [FetchPredicate]) -> [FetchPredicate] {
        operands.flatMap { operand in
            if case .or(let nested) = operand { flattened(nested) } else { [operand] }
        }
    }
}
