extension InMemoryStore: StoreResponder, OfflineAnswering {
    /// Answers every kind of request from memory: fetches (with prefetched relationships in
    /// `related`), object and relationship faults, and saves (all or nothing). A page request
    /// gets the whole fetch or relationship: memory has no pages.
    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        try Task.checkCancellation()
        let info = ResponseInfo(answeredBy: name, origin: .localStore)
        switch request {
        case .fetch(let fetch), .page(let fetch, _):
            let plan = try FetchPlan.planned(fetch, model: model)
            let snapshot = self.snapshot
            let result = plan.execute(over: snapshot.nodes(of: plan.entity.name), source: snapshot)
            var related: [Node] = []
            if case .objects(let nodes) = result, !fetch.relationshipKeyPathsForPrefetching.isEmpty {
                related = snapshot.nodes(along: fetch.relationshipKeyPathsForPrefetching, from: nodes)
            }
            return StoreResponse(.fetched(result), related: related, info: info)
        case .objectFault(let id):
            return StoreResponse(.object(node(for: id)), info: info)
        case .relationshipFault(let id, let name), .relationshipPage(let id, let name, _):
            let snapshot = self.snapshot
            guard let node = snapshot.node(for: id) else {
                throw StoreChainError(
                    .unavailable, "\(id) does not exist, so its relationship '\(name)' cannot be read",
                    suggestion: "the object was deleted; refetch before following its relationships")
            }
            let relationship = try model.requireEntity(id.entity).requireRelationship(name)
            let value = node.relationships[name] ?? (relationship.isToMany ? .toMany([]) : .toOne(nil))
            return StoreResponse(
                .relationship(value), related: value.objectIDs.compactMap(snapshot.node(for:)), info: info)
        case .save(let changes):
            return StoreResponse(.saved(try save(changes)), info: info)
        case .revalidation(let request, _):
            // Memory has no versions to compare: the full answer.
            return try await respond(to: request, context: context)
        case .changes:
            throw StoreChainError(
                .noEndpoint, "an in-memory store has no change feed",
                suggestion: "remove the change-feed handler from a chain that ends in memory")
        }
    }
}
