import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder: FetchNarrowing {
    /// The most keys a condition is replaced by: past this many, a backend's URL may be too long
    /// for it, and the fetch is planned as it was asked.
    static let narrowingKeyLimit = 200

    /// `request` with each top-level condition that compares a key path through a to-one
    /// relationship (`album.band.name == "X"` on Track) replaced by the keys of the related
    /// objects that meet it (`album.id IN {3, 7}`), when no endpoint can push the condition but
    /// one pushes the whole predicate so narrowed: the backend then filters, where otherwise the
    /// whole listing and every related object it names would be read (1,791 requests for that
    /// fetch through the demo's v2 API, 3 so). The keys come from a fetch of the related entity
    /// through the chain, so caches answer it and it is narrowed the same way in turn. `nil`:
    /// narrowing would not let the backend filter.
    package func narrowed(_ request: FetchRequest, predicate: FetchPredicate?, context: RequestContext) async throws
        -> NarrowedFetch?
    {
        guard let narrowing = try narrowing(of: request, predicate: predicate) else { return nil }
        var keys: [Int: [Value]] = [:]
        for (index, through) in narrowing.conditions {
            let found = try await relatedKeys(matching: through, serving: request, context: context)
            guard !found.isEmpty else { return .nothing }
            guard found.count <= Self.narrowingKeyLimit, narrowing.takesLists || found.count == 1 else { return nil }
            keys[index] = found
        }
        let predicate = narrowing.predicate(keys)
        guard try narrowing.planner.plan(predicate: predicate, sort: request.sortDescriptors).filterApplied else {
            return nil
        }
        var narrowed = request
        narrowed.predicate = predicate
        return .request(narrowed)
    }

    /// Which conditions of `predicate` narrowing would replace, found without sending anything:
    /// `nil` when an endpoint pushes the predicate as it is, or none would push it narrowed.
    func narrowing(of request: FetchRequest, predicate: FetchPredicate?) throws -> Narrowing? {
        guard let predicate, let entity = model.entity(named: request.entity) else { return nil }
        let conjuncts: [FetchPredicate]
        if case .and(let list) = predicate { conjuncts = list } else { conjuncts = [predicate] }
        let conditions = conjuncts.indices.compactMap { index in
            throughToOne(conjuncts[index], of: entity).map { (index, $0) }
        }
        // Most fetches have no such condition: they are not planned here at all.
        guard !conditions.isEmpty else { return nil }
        let planner = try planners.planner(for: entity.name)
        if try planner.plan(predicate: predicate, sort: request.sortDescriptors).filterApplied { return nil }
        var narrowing = Narrowing(planner: planner, conjuncts: conjuncts, conditions: conditions, takesLists: false)
        // Worth asking only if the backend would take the keys: as a list, or as one key.
        func pushedWhole(_ count: Int) throws -> Bool {
            try planner.plan(predicate: narrowing.standIn(keys: count), sort: request.sortDescriptors).filterApplied
        }
        narrowing.takesLists = try pushedWhole(2)
        guard try narrowing.takesLists || pushedWhole(1) else { return nil }
        return narrowing
    }

    /// `condition` as a condition on the related objects of a to-one relationship of `entity`,
    /// when it compares a key path through one with values (not just the relationship's key,
    /// which is the foreign key already).
    private func throughToOne(_ condition: FetchPredicate, of entity: EntityDescription) -> ThroughToOne? {
        guard case .comparison(let comparison) = condition, comparison.modifier == .direct,
            case .keyPath(let path) = comparison.lhs, path.count >= 2,
            let relationship = entity.relationship(named: path[0]), !relationship.isToMany,
            let destination = model.entity(named: relationship.destination),
            !ResolvedKeyPath.readsOnlyTheKey(through: relationship, to: destination, then: path.dropFirst()),
            comparison.rhs.isValue
        else { return nil }
        var related = comparison
        related.lhs = .keyPath(Array(path.dropFirst()))
        return ThroughToOne(relationship: relationship.name, destination: destination, condition: related)
    }

    /// The keys of the related objects that meet `through`'s condition, fetched through the chain.
    private func relatedKeys(matching through: ThroughToOne, serving request: FetchRequest, context: RequestContext)
        async throws -> [Value]
    {
        let fetch = StoreRequest.fetch(
            FetchRequest(
                entity: through.destination.name, predicate: .comparison(through.condition), resultType: .objectIDs))
        let response = try await context.subrequestThroughChain(fetch, serving: .fetch(request))
        switch try response.fetchResult() {
        case .objectIDs(let ids): return ids.compactMap(\.key)
        case .objects(let nodes): return nodes.compactMap(\.id.key)
        case .count, .dictionaries:
            throw StoreChainError(
                .invalidResponse, "\(response.info.answeredBy) answered a fetch of IDs without IDs",
                suggestion: "a handler answers a fetch of object IDs with object IDs")
        }
    }
}

/// The conditions of a fetch that narrowing replaces by keys, and the predicate it makes.
struct Narrowing {
    let planner: QueryPlanner
    let conjuncts: [FetchPredicate]
    /// Each condition, by its place among the conjuncts.
    let conditions: [(Int, ThroughToOne)]
    /// An endpoint takes a list of keys, not just one.
    var takesLists: Bool

    /// The predicate with each condition replaced by the keys given for it.
    func predicate(_ keys: [Int: [Value]]) -> FetchPredicate {
        var result = conjuncts
        for (index, through) in conditions {
            guard let values = keys[index] else { continue }
            result[index] = through.keys(values)
        }
        return result.count == 1 ? result[0] : .and(result)
    }

    /// The predicate planned with `keys` stand-in keys for each condition (the real ones are
    /// fetched when it runs); `nil` as many as the endpoint takes.
    func standIn(keys count: Int? = nil) -> FetchPredicate {
        let repeated = count ?? (takesLists ? 2 : 1)
        return predicate(
            Dictionary(
                uniqueKeysWithValues: conditions.map { ($0.0, Array(repeating: $0.1.placeholder, count: repeated)) }))
    }

    /// A pushed comparison as `explain` says it: one on keys this narrowing reads first names
    /// them so (`album.id IN {keys read first}`), not by the stand-ins it was planned with.
    func describe(_ comparison: Comparison) -> String? {
        for (_, through) in conditions
        where comparison.lhs == .keyPath([through.relationship, through.destination.key]) {
            let keyPath = "\(through.relationship).\(through.destination.key)"
            return takesLists ? "\(keyPath) IN {keys read first}" : "\(keyPath) == {the one key read first}"
        }
        return nil
    }

    /// How `explain` says it: `album.band.name == "X" read as album.id among the keys of Album where band.name == "X"`.
    var descriptions: [String] {
        conditions.map { index, through in
            "\(conjuncts[index].format) read as \(through.relationship).\(through.destination.key) among the keys of "
                + "\(through.destination.name) where \(FetchPredicate.comparison(through.condition).format), fetched first"
        }
    }
}

/// A condition on a key path through a to-one relationship, as a condition on its destination.
struct ThroughToOne {
    let relationship: String
    let destination: EntityDescription
    /// The condition with the relationship's name taken off the key path.
    let condition: Comparison

    /// A key of the destination's type, to ask the planner whether an endpoint takes keys.
    var placeholder: Value {
        destination.keyAttribute?.type == .string ? .string("key") : .integer(1)
    }

    /// The condition the keys stand for: the relationship's key among them.
    func keys(_ values: [Value]) -> FetchPredicate {
        let keyPath = Operand.keyPath([relationship, destination.key])
        if values.count == 1 { return .comparison(Comparison(keyPath, .equal, .constant(values[0]))) }
        return .comparison(Comparison(keyPath, .in, .array(values.map(Operand.constant))))
    }
}

extension Operand {
    /// A constant or a list of constants: what a comparison's other side is when the backend can
    /// be asked for it.
    fileprivate var isValue: Bool {
        switch self {
        case .constant: true
        case .array(let items): items.allSatisfy(\.isValue)
        case .keyPath, .variable, .aggregate: false
        }
    }
}
