/// A fetch as a cache looks it up: its plan, and what the cache derives from the request to find
/// a stored answer (the normalized request, its shape, the entities it reads). Worked out once
/// per distinct request and kept (`CachePlans`): a warm fetch spent a third of its time deriving
/// these again.
struct CachePlan: Sendable {
    let fetch: FetchPlan
    /// The request as the cache stores its windows (`FetchRequest.normalizedForCache`).
    let normalized: FetchRequest
    /// What the cache forwards and stores the answer of (`FetchRequest.forwardedForCache`): the
    /// normalized request, or for a count, the count of every match.
    let forwarded: FetchRequest
    /// `CachedQuery.shape` of the normalized request: which stored windows can answer it.
    let shape: String
    /// The entity and every entity whose changes can change its answer, in name order
    /// (`FetchPlan.reachedEntities`).
    let reachedEntities: [String]
    /// Whether answering it reads nothing but its entity's own attributes
    /// (`readsOwnAttributesOnly(_:entity:)`): a window it is answered from needs no index by ID.
    let readsOwnAttributesOnly: Bool

    /// - Throws: `StoreChainError` when the request does not fit the model.
    init(_ request: FetchRequest, model: ObjectModel) throws(StoreChainError) {
        fetch = try FetchPlan.planned(request, model: model)
        normalized = request.normalizedForCache
        forwarded = request.forwardedForCache
        shape = CachedQuery.shape(of: normalized)
        reachedEntities = fetch.reachedEntities
        readsOwnAttributesOnly = Self.readsOwnAttributesOnly(request, entity: fetch.entity)
    }

    /// Whether answering `request` reads nothing but its entity's own attributes: its predicate
    /// compares attributes with constants, it sorts by attributes, its result holds objects, IDs,
    /// a count or attributes, and it prefetches nothing. Anything else (a relationship, an
    /// aggregate, a variable) counts as reading other objects.
    static func readsOwnAttributesOnly(_ request: FetchRequest, entity: EntityDescription) -> Bool {
        guard request.relationshipKeyPathsForPrefetching.isEmpty else { return false }
        func isOwnAttribute(_ components: [String]) -> Bool {
            components.count == 1 && entity.attribute(named: components[0]) != nil
        }
        func isPlain(_ operand: Operand) -> Bool {
            switch operand {
            case .keyPath(let components): isOwnAttribute(components)
            case .constant: true
            case .array(let elements): elements.allSatisfy(isPlain)
            case .variable, .aggregate: false
            }
        }
        var plain = true
        request.predicate?.forEachComparison { comparison in
            plain = plain && comparison.modifier == .direct && isPlain(comparison.lhs) && isPlain(comparison.rhs)
        }
        guard plain, request.sortDescriptors.allSatisfy({ isOwnAttribute([$0.keyPath]) }) else { return false }
        if case .dictionaries(let properties) = request.resultType {
            return properties.allSatisfy { isOwnAttribute([$0]) }
        }
        return true
    }
}

/// The plans of the requests a cache saw last, by request (`KeptValues`).
final class CachePlans: Sendable {
    private let plans: KeptValues<FetchRequest, CachePlan>
    private let model: ObjectModel

    init(model: ObjectModel, capacity: Int = 256) {
        self.model = model
        plans = KeptValues(capacity: capacity)
    }

    /// The plan of `request`, made now unless kept.
    ///
    /// - Throws: `StoreChainError` when the request does not fit the model (not kept).
    func plan(for request: FetchRequest) throws(StoreChainError) -> CachePlan {
        try plans.value(for: request) { () throws(StoreChainError) in try CachePlan(request, model: model) }
    }

    var count: Int { plans.count }
}
