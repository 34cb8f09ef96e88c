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
        let pushed: [FetchPredicate]
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
    /// The bound and sortable key paths that lead to a value for every object (every
    /// relationship on the way and the attribute at the end are required), so a backend's `<>`
    /// loses none of them and its order has no nils to place.
    let neverNil: Set<String>

    /// The fetch endpoints, then the get-by-key endpoint as a single-record endpoint on the key.
    init(entity: EntityDescription, options: RemoteEntityOptions, model: ObjectModel) throws(StoreChainError) {
        self.entity = entity
        // A filter grammar is a parameter and binding for each field and lookup.
        var endpoints = options.fetch.map { endpoint in endpoint.filters.reduce(endpoint) { $1.expand($0) } }
        if let get = options.get {
            let template = try RequestTemplate(get)
            if let variable = template.pathVariables.first {
                endpoints.append(RemoteEndpoint(get, bind: [variable: ParameterBinding(entity.key)], single: true))
            }
        }
        self.endpoints = endpoints
        let keyPaths = Set(
            endpoints.flatMap { endpoint in
                endpoint.bind.values.map(\.keyPath) + (endpoint.sort?.keyPaths ?? [])
            })
        self.neverNil = keyPaths.filter { keyPath in
            guard
                let resolved = try? ResolvedKeyPath(
                    keyPath.split(separator: ".").map(String.init), from: entity, in: model),
                let attribute = resolved.attribute
            else { return false }
            return !attribute.isOptional
                && resolved.steps.allSatisfy { !$0.relationship.isOptional && !$0.relationship.isToMany }
        }
    }

    /// The key paths of `sort` that may be nil for some object.
    func nilable(_ sort: [FetchSortDescriptor]) -> Set<String> {
        Set(sort.map(\.keyPath).filter { !neverNil.contains($0) })
    }

    /// The best plan for a (validated) predicate and sort.
    func plan(predicate: FetchPredicate?, sort: [FetchSortDescriptor]) throws(StoreChainError) -> Plan {
        let conjuncts = Self.conjuncts(of: predicate)
        let disjunctions = Self.disjunctions(of: predicate)
        var best: (plan: Plan, score: Int)?
        var reasons: [String] = []
        for endpoint in endpoints {
            switch try evaluate(endpoint, conjuncts: conjuncts, disjunctions: disjunctions, sort: sort) {
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
                || (Self.isConjunction(predicate, orsAllowed: true) && plan.bindingsExact
                    && Set(plan.pushed) == Set(conjuncts.map(\.predicate) + disjunctions))
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
        let disjunctions = Self.disjunctions(of: predicate)
        return endpoints.compactMap { endpoint in
            guard
                case .failure(let reason)? = try? evaluate(
                    endpoint, conjuncts: conjuncts, disjunctions: disjunctions, sort: sort)
            else {
                return nil
            }
            return "\(endpoint.request): \(reason)"
        }
    }

    private enum Outcome {
        case success(Plan)
        case failure(String)
    }

    private func evaluate(
        _ endpoint: RemoteEndpoint, conjuncts: [Conjunct], disjunctions: [FetchPredicate], sort: [FetchSortDescriptor]
    ) throws(StoreChainError) -> Outcome {
        let template = try RequestTemplate(endpoint.request)
        let parts = endpoint.expressionParts
        let reserved = Set(
            Self.pagingVariables(endpoint.paging) + [endpoint.sort?.variable].compactMap { $0 }
                + parts.values.map(\.expression))
        // The template's own variables, then the parts of its filter expressions.
        let variables =
            template.variables.filter { !reserved.contains($0) }
            + parts.keys.sorted { ($0.count, $0) < ($1.count, $1) }
        var bound: [(variable: String, conjunct: Conjunct, values: [Value], exact: Bool, required: Bool)] = []
        for variable in variables {
            let binding = endpoint.bind[variable] ?? ParameterBinding(variable)
            let required = binding.required || template.pathVariables.contains(variable)
            guard let (conjunct, values) = conjuncts.lazy.compactMap({ bind(binding, to: $0) }).first else {
                if required {
                    return .failure(
                        "{\(variable)} needs a comparison on '\(binding.keyPath)' (\(binding.operation.rawValue))")
                }
                continue
            }
            bound.append((variable, conjunct, values, Self.isExact(binding, conjunct), required))
        }
        // The backend applies every parameter sent, so a conjunct one variable pushes exactly
        // needs no other (a looser lookup, or a second exact one) beside it.
        let exactly = Set(bound.filter(\.exact).map(\.conjunct))
        var values: [String: String] = [:]
        var pushed: [Conjunct] = []
        var servedExactly: Set<Conjunct> = []
        var expressions: [String: [(conjunct: Int, text: String)]] = [:]
        for variable in bound {
            let needed =
                variable.required
                || (variable.exact ? !servedExactly.contains(variable.conjunct) : !exactly.contains(variable.conjunct))
            guard needed else { continue }
            if let part = parts[variable.variable] {
                expressions[part.expression, default: []].append(
                    (conjuncts.firstIndex(of: variable.conjunct) ?? 0, part.written(variable.values)))
            } else {
                values[variable.variable] = variable.values.map(Self.parameterText).joined(separator: ",")
            }
            if variable.exact { servedExactly.insert(variable.conjunct) }
            if !pushed.contains(variable.conjunct) { pushed.append(variable.conjunct) }
        }
        // An OR goes whole into an expression that can write it, after the conjuncts.
        var pushedDisjunctions: [FetchPredicate] = []
        for (index, disjunction) in disjunctions.enumerated() {
            guard let (expression, text) = written(disjunction, by: endpoint) else { continue }
            expressions[expression, default: []].append((conjuncts.count + index, text))
            pushedDisjunctions.append(disjunction)
        }
        // Each expression's parts in the predicate's order.
        for (expression, texts) in expressions {
            let and = parts.values.first { $0.expression == expression }?.spelling.and ?? " and "
            values[expression] = texts.sorted { $0.conjunct < $1.conjunct }.map(\.text).joined(separator: and)
        }
        let exact = pushed.allSatisfy { exactly.contains($0) }
        var sortPushed = false
        var tiesInKeyOrder = true
        if let sortBinding = endpoint.sort,
            let push = sortBinding.pushed(for: sort, key: entity.key, nilable: nilable(sort))
        {
            values[sortBinding.variable] = push.value
            sortPushed = push.ordered
            tiesInKeyOrder = push.tiesInKeyOrder
        }
        var plan = Plan(
            endpoint: endpoint, template: template, values: values,
            pushed: pushed.map(\.predicate) + pushedDisjunctions,
            sortPushed: sortPushed)
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
