/// How the pager answers a fault its terminal has no single exchange for (`no-endpoint`), with
/// requests through the chain (so the caches answer what they hold): an object by a fetch of its
/// key; a relationship from its owner's record, read again by key, or as a fetch of the objects
/// whose to-one inverse names the owner. A terminal thus makes one exchange per request and
/// never reads on its own account.
enum FaultFallback {
    /// `id`'s object, as a fetch of its key through the chain; `nil` when the entity is unknown or
    /// `id` has no key.
    static func object(_ id: ObjectID, model: ObjectModel, answeredBy name: String, context: RequestContext)
        async throws -> StoreResponse?
    {
        guard let entity = model.entity(named: id.entity), let key = id.key else { return nil }
        let loader = RelatedLoader(model: model, backend: context.services.backendReads)
        let nodes = try await loader.fetchNodes(entity, keys: [key], context: context, serving: .objectFault(id))
        return StoreResponse(
            .object(nodes.first { $0.id == id }), info: ResponseInfo(answeredBy: name, origin: .remote))
    }

    /// `owner`'s `relationship`: from the owner's record where the terminal says its records
    /// hold it (`BackendReads`), else through its to-one inverse; `nil` when neither can.
    static func relationship(
        _ relationship: RelationshipDescription, of owner: ObjectID, model: ObjectModel, context: RequestContext
    ) async throws -> StoreResponse? {
        switch context.services.backendReads?.relationshipSource(relationship.name, of: owner.entity) {
        case .keyInRecord(let mapped)?, .embedded(let mapped)?:
            try await fromRecord(relationship, of: owner, mapped: mapped, model: model, context: context)
        default:
            try await throughInverse(relationship, of: owner, model: model, context: context)
        }
    }

    /// The relationship as the owner's own record holds it, with the records of the objects it
    /// names. Where the backend reads one object by key, the record is read again past the caches
    /// (they may hold a slimmer record of a listing): one exchange, as a terminal reading it
    /// would make. Where it does not, the owner is read as the fetch by key the pager makes of
    /// it, which the caches may answer: a reload there would read the whole listing again.
    private static func fromRecord(
        _ relationship: RelationshipDescription, of owner: ObjectID, mapped: String, model: ObjectModel,
        context: RequestContext
    ) async throws -> StoreResponse {
        let byKey = context.services.backendReads?.readsObjectsByKey(of: owner.entity) ?? true
        let read = try await context.subrequestThroughChain(
            .objectFault(owner), serving: .relationshipFault(owner, relationship: relationship.name),
            cachePolicy: byKey ? .reload : nil)
        guard let node = try read.objectNode() else {
            throw StoreChainError(
                .unavailable, "\(owner) no longer exists, so its '\(relationship.name)' cannot be read")
        }
        // A record that leaves the field out says nothing of the relationship: not "none".
        guard let value = node.relationships[relationship.name] else {
            throw StoreChainError(
                .noEndpoint,
                "\(owner)'s own record leaves out '\(owner.entity).\(relationship.name)' (mapped \(mapped))",
                suggestion: RelatedLoader.leftOutSuggestion(owner.entity))
        }
        let named = Set(value.objectIDs)
        let answer = StoreResponse(
            .relationship(value), related: read.related.filter { named.contains($0.id) }, info: listInfo(of: read))
        return try await withTheirRecords(answer, of: owner, relationship, model: model, context: context)
    }

    /// A relationship read as the fetch of the objects whose to-one inverse names `owner`
    /// (`Band/1.albums` as `Album where band.id == 1`, in key order; a to-one as the first of
    /// them); `nil` when the relationship has no to-one inverse.
    static func throughInverse(
        _ relationship: RelationshipDescription, of owner: ObjectID, model: ObjectModel, context: RequestContext
    ) async throws -> StoreResponse? {
        guard let inverseName = relationship.inverse, let key = owner.key,
            let ownerEntity = model.entity(named: owner.entity),
            let destination = model.entity(named: relationship.destination),
            destination.relationship(named: inverseName)?.isToMany == false
        else { return nil }
        let fetch = FetchRequest(
            entity: destination.name,
            predicate: .comparison(Comparison(.keyPath([inverseName, ownerEntity.key]), .equal, .constant(key))),
            sortDescriptors: [FetchSortDescriptor(destination.key)])
        let response = try await context.subrequestThroughChain(
            .fetch(fetch), serving: .relationshipFault(owner, relationship: relationship.name))
        let members = try response.fetchedObjects(for: fetch)
        let value: RelationshipValue = relationship.isToMany ? .toMany(members.map(\.id)) : .toOne(members.first?.id)
        return StoreResponse(.relationship(value), related: members, info: listInfo(of: response))
    }

    /// What a relationship read through another request keeps of that request's answer: only
    /// what every answer has (a fetch's windows, pages and collections, an object's validators,
    /// are not the relationship's).
    private static func listInfo(of response: StoreResponse) -> ResponseInfo {
        var info = ResponseInfo(
            answeredBy: response.info.answeredBy, origin: response.info.origin, isStale: response.info.isStale)
        info.freshness = response.info.freshness?.withoutValidators
        return info
    }

    /// A relationship answered whole, with the records of the objects it names: those the
    /// answer did not bring are read by key through the chain, for whoever follows it.
    static func withTheirRecords(
        _ answer: StoreResponse, of owner: ObjectID, _ relationship: RelationshipDescription, model: ObjectModel,
        context: RequestContext
    ) async throws -> StoreResponse {
        guard case .relationship(let value) = answer.result,
            let destination = model.entity(named: relationship.destination)
        else { return answer }
        let held = Set(answer.related.map(\.id))
        let missing = value.objectIDs.filter { !held.contains($0) }
        guard !missing.isEmpty else { return answer }
        let loader = RelatedLoader(model: model, backend: context.services.backendReads)
        let read = try await loader.fetchNodes(
            destination, keys: missing.compactMap(\.key), context: context,
            serving: .relationshipFault(owner, relationship: relationship.name))
        return StoreResponse(answer.result, related: answer.related + read, info: answer.info)
    }
}
