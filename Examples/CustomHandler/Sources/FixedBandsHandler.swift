import StoreChain

/// A user-written handler: answers fetches of `Band` objects whose IDs are all in a local table
/// (for example bands bundled with the app), and forwards every other request.
///
/// It answers `id == 3` and `id IN {1, 3}` style fetches itself, applying the rest of the request
/// (sort, window, result type) with the same `FetchPlan` every store uses, so its answers are
/// exactly what the terminal would give for those objects.
public struct FixedBandsHandler: StoreHandler {
    public let model: ObjectModel
    /// The locally known bands, by ID.
    public let bands: [ObjectID: Node]

    public init(model: ObjectModel, bands: [Node]) {
        self.model = model
        self.bands = Dictionary(bands.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        guard case .fetch(let fetch) = request, fetch.entity == "Band",
            fetch.relationshipKeyPathsForPrefetching.isEmpty,
            let keys = Self.requestedKeys(fetch.predicate),
            keys.allSatisfy({ bands[ObjectID(entity: "Band", key: $0)] != nil })
        else { return try await next(request, context) }
        let plan = try FetchPlan(fetch, model: model)
        let nodes = keys.compactMap { bands[ObjectID(entity: "Band", key: $0)] }
        let result = plan.execute(over: nodes, source: bands)
        return StoreResponse(.fetched(result), info: ResponseInfo(answeredBy: name, origin: .memory))
    }

    /// The keys a predicate asks for when it is exactly `id == k` or `id IN {…}`.
    static func requestedKeys(_ predicate: FetchPredicate?) -> [Value]? {
        guard case .comparison(let comparison)? = predicate, comparison.modifier == .direct,
            comparison.options.isEmpty, comparison.lhs == .keyPath(["id"])
        else { return nil }
        switch (comparison.op, comparison.rhs) {
        case (.equal, .constant(let key)): return [key]
        case (.in, .array(let elements)):
            let keys = elements.compactMap { element -> Value? in
                if case .constant(let key) = element { return key }
                return nil
            }
            return keys.count == elements.count ? keys : nil
        default: return nil
        }
    }
}
