import Foundation
import StoreChain

/// Picks, for a fetch, the endpoint that pushes the most of the request to the backend, and the
/// values of its variables. What the endpoint does not do is applied in memory afterwards, so
/// an endpoint may return more than asked (a case-insensitive search for a case-sensitive
/// comparison) but never less.
struct QueryPlanner {
    /// A chosen endpoint and what it will do.
    struct Plan: Sendable {
        let endpoint: RemoteEndpoint
        let template: RequestTemplate
        /// Filter and sort variable values; paging variables are filled in per page.
        let values: [String: String]
        /// The conjuncts the backend applies.
        let pushed: [Comparison]
        let sortPushed: Bool
        /// The backend applies the whole predicate exactly (returns no extra records).
        var filterApplied = false
        /// The backend returns records in the requested order (the sort was pushed, or it is key
        /// order, or none, and the endpoint lists in key order).
        var orderApplied: Bool { sortPushed || (sortIsKeyOrder && endpoint.keyOrdered) }
        /// The sort is none, or the key ascending (the order a key-ordered endpoint lists in).
        var sortIsKeyOrder = false
        /// A pushed sort's ties come back in ascending key order.
        fileprivate var pushedSortTiesInKeyOrder = true
        /// Records that sort equal come back in ascending key order (the order is the key's, or
        /// the pushed sort breaks ties by it).
        var tiesInKeyOrder: Bool { sortIsKeyOrder || !sortPushed || pushedSortTiesInKeyOrder }
        /// Every pushed conjunct is bound exactly, not to a more permissive filter.
        fileprivate var bindingsExact = true
    }

    let entity: EntityDescription
    let endpoints: [RemoteEndpoint]

    /// The fetch endpoints, then the get-by-key endpoint as a single-record endpoint on the key.
    init(entity: EntityDescription, options: RemoteEntityOptions) throws(StoreChainError) {
        self.entity = entity
        // A filter grammar is a parameter and binding for each field and lookup.
        var endpoints = options.fetch.map { $0.filter?.expand($0) ?? $0 }
        if let get = options.get {
            let template = try RequestTemplate(get)
            if let variable = template.pathVariables.first {
                endpoints.append(RemoteEndpoint(get, bind: [variable: ParameterBinding(entity.key)], single: true))
            }
        }
        self.endpoints = endpoints
    }

    /// The best plan for a (validated) predicate and sort.
    func plan(predicate: FetchPredicate?, sort: [FetchSortDescriptor]) throws(StoreChainError) -> Plan {
        let conjuncts = Self.conjuncts(of: predicate)
        var best: (plan: Plan, score: Int)?
        var reasons: [String] = []
        for endpoint in endpoints {
            switch try evaluate(endpoint, conjuncts: conjuncts, sort: sort) {
            case .success(let plan):
                let score = plan.pushed.count * 10 + (plan.sortPushed ? 1 : 0)
                if score > (best?.score ?? -1) { best = (plan, score) }
            case .failure(let reason):
                reasons.append("\(endpoint.request): \(reason)")
            }
        }
        if var plan = best?.plan {
            plan.sortIsKeyOrder =
                sort.isEmpty || (sort.count == 1 && sort[0].keyPath == entity.key && sort[0].ascending)
            plan.filterApplied =
                predicate == nil
                || (Self.isConjunction(predicate) && plan.bindingsExact && Set(plan.pushed) == Set(conjuncts))
            return plan
        }
        let considered = endpoints.isEmpty ? "it declares no fetch or get endpoints" : reasons.joined(separator: "; ")
        throw StoreChainError(
            .noEndpoint,
            "no endpoint of '\(entity.name)' can serve a fetch where \(predicate?.format ?? "TRUEPREDICATE"): \(considered)",
            suggestion:
                "declare an endpoint without required variables (a list endpoint), or one whose variables the predicate binds"
        )
    }

    /// The endpoints that cannot serve a predicate and sort, each with why.
    func rejections(predicate: FetchPredicate?, sort: [FetchSortDescriptor]) -> [String] {
        let conjuncts = Self.conjuncts(of: predicate)
        return endpoints.compactMap { endpoint in
            guard case .failure(let reason)? = try? evaluate(endpoint, conjuncts: conjuncts, sort: sort) else {
                return nil
            }
            return "\(endpoint.request): \(reason)"
        }
    }

    private enum Outcome {
        case success(Plan)
        case failure(String)
    }

    private func evaluate(_ endpoint: RemoteEndpoint, conjuncts: [Comparison], sort: [FetchSortDescriptor])
        throws(StoreChainError) -> Outcome
    {
        let template = try RequestTemplate(endpoint.request)
        let reserved = Set(Self.pagingVariables(endpoint.paging) + [endpoint.sort?.variable].compactMap { $0 })
        var values: [String: String] = [:]
        var pushed: [Comparison] = []
        var exact = true
        for variable in template.variables where !reserved.contains(variable) {
            let binding = endpoint.bind[variable] ?? ParameterBinding(variable)
            let required = binding.required || template.pathVariables.contains(variable)
            guard
                let (conjunct, value) = conjuncts.lazy.compactMap({ Self.bind(binding, to: $0).map { ($0.0, $0.1) } })
                    .first
            else {
                if required {
                    return .failure(
                        "{\(variable)} needs a comparison on '\(binding.keyPath)' (\(binding.operation.rawValue))")
                }
                continue
            }
            values[variable] = value
            if !pushed.contains(conjunct) { pushed.append(conjunct) }
            exact = exact && Self.isExact(binding, conjunct)
        }
        var sortPushed = false
        var tiesInKeyOrder = true
        if let sortBinding = endpoint.sort, let push = sortBinding.pushed(for: sort, key: entity.key) {
            values[sortBinding.variable] = push.value
            sortPushed = push.ordered
            tiesInKeyOrder = push.tiesInKeyOrder
        }
        var plan = Plan(endpoint: endpoint, template: template, values: values, pushed: pushed, sortPushed: sortPushed)
        plan.pushedSortTiesInKeyOrder = tiesInKeyOrder
        plan.bindingsExact = exact
        return .success(plan)
    }

    static func pagingVariables(_ paging: Paging?) -> [String] {
        switch paging {
        case .pages(let page, let perPage, _, _)?: [page, perPage]
        case .cursor(let variable, _, let limit, _)?: [variable] + [limit].compactMap { $0 }
        case .offset(let offset, let limit, _)?: [offset, limit]
        case .link?, nil: []
        }
    }

    /// The top-level conjuncts of a predicate (the comparisons joined by AND).
    static func conjuncts(of predicate: FetchPredicate?) -> [Comparison] {
        switch predicate {
        case .comparison(let comparison)?: [comparison]
        case .and(let operands)?: operands.flatMap { conjuncts(of: $0) }
        default: []
        }
    }

    /// Whether a predicate is comparisons joined by AND (so its conjuncts are all of it).
    static func isConjunction(_ predicate: FetchPredicate?) -> Bool {
        switch predicate {
        case .comparison?: true
        case .and(let operands)?: operands.allSatisfy { isConjunction($0) }
        default: false
        }
    }

    /// Whether the backend's filter for `binding` matches exactly what `conjunct` does.
    static func isExact(_ binding: ParameterBinding, _ conjunct: Comparison) -> Bool {
        guard binding.caseInsensitive == conjunct.options.contains(.caseInsensitive) else { return false }
        return switch binding.operation {
        case .equal: conjunct.op == .equal
        case .beginsWith: conjunct.op == .beginsWith
        case .contains: conjunct.op == .contains
        case .atLeast: conjunct.op == .greaterOrEqual
        case .atMost: conjunct.op == .lessOrEqual
        case .oneOf: conjunct.op == .equal || conjunct.op == .in
        }
    }

    /// The value a binding takes from a conjunct, when the backend's filter is at least as
    /// permissive as the comparison (so nothing that matches is lost).
    static func bind(_ binding: ParameterBinding, to conjunct: Comparison) -> (Comparison, String)? {
        guard conjunct.modifier == .direct, case .keyPath(let components) = conjunct.lhs,
            components.joined(separator: ".") == binding.keyPath,
            !conjunct.options.contains(.diacriticInsensitive),
            binding.caseInsensitive || !conjunct.options.contains(.caseInsensitive)
        else { return nil }
        let op = conjunct.op
        func constant(_ operand: Operand) -> String? {
            guard case .constant(let value) = operand, !value.isNull else { return nil }
            return parameterText(value)
        }
        func element(_ index: Int) -> String? {
            guard case .array(let elements) = conjunct.rhs, elements.count > index else { return nil }
            return constant(elements[index])
        }
        let value: String?
        switch binding.operation {
        case .equal: value = op == .equal ? constant(conjunct.rhs) : nil
        case .beginsWith: value = [.beginsWith, .equal].contains(op) ? constant(conjunct.rhs) : nil
        case .contains: value = [.contains, .beginsWith, .endsWith, .equal].contains(op) ? constant(conjunct.rhs) : nil
        case .atLeast:
            value =
                [.greaterOrEqual, .greater, .equal].contains(op)
                ? constant(conjunct.rhs) : (op == .between ? element(0) : nil)
        case .atMost:
            value =
                [.lessOrEqual, .less, .equal].contains(op)
                ? constant(conjunct.rhs) : (op == .between ? element(1) : nil)
        case .oneOf:
            if op == .equal {
                value = constant(conjunct.rhs)
            } else if op == .in, case .array(let elements) = conjunct.rhs {
                let texts = elements.compactMap(constant)
                value = texts.count == elements.count && !texts.isEmpty ? texts.joined(separator: ",") : nil
            } else {
                value = nil
            }
        }
        return value.map { (conjunct, $0) }
    }

    /// A value as a URL parameter: dates in ISO-8601, others as their plain text.
    static func parameterText(_ value: Value) -> String {
        switch value {
        case .date(let date): ISO8601.format(date)
        default: value.description
        }
    }
}

extension [String: QueryPlanner] {
    /// The planner of `entity`'s endpoints.
    ///
    /// - Throws: `.noEndpoint` when the remote options do not map the entity.
    func planner(for entity: String) throws(StoreChainError) -> QueryPlanner {
        guard let planner = self[entity] else {
            throw StoreChainError(
                .noEndpoint, "the backend has no mapping for entity '\(entity)'",
                suggestion: "add '\(entity)' to the remote options' entities")
        }
        return planner
    }
}
