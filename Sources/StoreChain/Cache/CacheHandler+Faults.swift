import Foundation

extension CacheHandler {
    /// An object fault; with `validators`, a revalidation from a cache above, which is answered
    /// in full from here when this cache can, and otherwise forwarded as a revalidation.
    func objectFault(
        _ id: ObjectID, ifChangedSince validators: Validators? = nil, context: RequestContext,
        next: NextResponder
    ) async throws -> StoreResponse {
        guard !id.isTemporary else {
            return try await next(Self.conditional(.objectFault(id), ifChangedSince: validators), context)
        }
        let node = await storedNode(id, context: context)
        let request = StoreRequest.objectFault(id)
        // Every cache hit's path: a fresh node is answered as `serve` would answer it, without
        // building a cached answer or the forwarded request.
        if let node, let freshness = node.sharedFreshness?.value,
            Self.isFreshHit(freshness, policy: context.effectiveCachePolicy(for: request), at: context.clock.now)
        {
            var info = ResponseInfo(answeredBy: name, origin: storage.origin)
            info.cacheStatus = .hit
            return StoreResponse(.object(node), info: info)
        }
        return try await serve(
            request, cached: node.map { cachedAnswer($0) }, context: context, refresh: refreshFault(next: next),
            forward: {
                try await forward(Self.conditional(request, ifChangedSince: validators), context: context, next: next)
            })
    }

    func relationshipFault(_ id: ObjectID, _ name: String, context: RequestContext, next: NextResponder)
        async throws -> StoreResponse
    {
        let request = StoreRequest.relationshipFault(id, relationship: name)
        guard !id.isTemporary, let relationship = model.entity(named: id.entity)?.relationship(named: name) else {
            return try await next(request, context)
        }
        let cached = await perform("read", context: context) { try await cachedRelationship(id, relationship) } ?? nil
        return try await serve(
            request, cached: cached, context: context, refresh: refreshFault(next: next),
            forward: { try await forward(request, context: context, next: next) })
    }

    /// Data with no freshness recorded counts as expired.
    static var expired: Freshness { Freshness(expiresAt: .distantPast) }

    private func refreshFault(next: NextResponder) -> Refresh {
        { cached, context in
            guard var response = try await self.revalidate(cached, context: context, next: next) else {
                return self.answer(cached, status: .revalidated)
            }
            response.info.cacheStatus = .refreshed
            return response
        }
    }

    /// Forwards a fault (one call for identical faults in flight) and stores the answer.
    func forward(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws -> StoreResponse {
        let key = "\(request)"
        let mark = saveOrder.mark()
        let forwarded = try await inFlight.run("\(key) since save \(mark)") {
            try await forwardOnce(
                key, context: context, stored: { await storedFault(request.unconditional, context: context) }
            ) {
                let response = try await next(request, context)
                await keep(response, of: request.unconditional, readSince: mark, context: context)
                return response
            }
        }
        var response = forwarded.response
        response.info.cacheStatus = Self.status(forwarded.isStored ? .hit : .miss, below: response.info.cacheStatus)
        return response
    }

    /// The stored answer to a fault, when it is fresh.
    func storedFault(_ request: StoreRequest, context: RequestContext) async -> StoreResponse? {
        let cached: CachedAnswer?
        switch request {
        case .objectFault(let id):
            cached = await cachedObject(id, context: context)
        case .relationshipFault(let id, let name):
            guard let relationship = model.entity(named: id.entity)?.relationship(named: name) else { return nil }
            cached = await perform("read", context: context) { try await cachedRelationship(id, relationship) } ?? nil
        default:
            return nil
        }
        guard let cached, cached.freshness.isFresh(at: context.clock.now) else { return nil }
        return cached.response
    }

    /// The stored node, or `nil` when the storage fails (logged, as `perform` does). Every
    /// object fault's path: untraced, it awaits the storage without `perform`'s closure, an async
    /// frame that cost a tenth of a memory-cache hit.
    @inline(__always)
    private func storedNode(_ id: ObjectID, context: RequestContext) async -> Node? {
        guard !context.isTracing else {
            return await perform("read", context: context) { try await storage.node(id) } ?? nil
        }
        do {
            return try await storage.node(id)
        } catch {
            storageFailed("read", error, context: context)
            return nil
        }
    }

    /// The cached object, as the answer to its fault.
    private func cachedObject(_ id: ObjectID, context: RequestContext) async -> CachedAnswer? {
        await perform("read", context: context) { try await storage.node(id) }?.map { cachedAnswer($0) }
    }

    private func cachedAnswer(_ node: Node) -> CachedAnswer {
        CachedAnswer(
            response: StoreResponse(.object(node), info: ResponseInfo(answeredBy: name, origin: storage.origin)),
            freshness: node.freshness ?? Self.expired, source: .objectFault(node.id), target: .node(node.id))
    }

    /// The relationship's objects from the owner's cached value, or, when the owner does not
    /// hold it, from the destination's complete collection through the inverse.
    private func cachedRelationship(_ id: ObjectID, _ relationship: RelationshipDescription) async throws
        -> CachedAnswer?
    {
        let owner = try await storage.node(id)
        var value = owner?.relationships[relationship.name]
        var freshness = owner?.freshness ?? Self.expired
        // The related objects, when the way to the value read them already.
        var read: [Node]?
        if value == nil, let inverse = relationship.inverse,
            let collection = try await storage.collection(relationship.destination)
        {
            // The members whose inverse leads to the owner (a storage may select them by it, as
            // the disk cache does in SQL, instead of handing back the whole collection).
            let byOwner = model.entity(named: id.entity).flatMap { owner in
                id.key.map {
                    FetchPredicate.comparison(Comparison(.keyPath([inverse, owner.key]), .equal, .constant($0)))
                }
            }
            let members = try await storage.nodes(of: relationship.destination, matching: byOwner).filter {
                $0.relationships[inverse]?.objectIDs.contains(id) == true
            }
            read = relationship.isToMany ? members : Array(members.prefix(1))
            value = relationship.isToMany ? .toMany(members.map(\.id)) : .toOne(members.first?.id)
            freshness = collection
        }
        guard let value else { return nil }
        let related: [Node]
        if let read {
            related = read
        } else {
            let found = try await storage.nodes(value.objectIDs)
            related = value.objectIDs.compactMap { found[$0] }
            guard related.count == value.objectIDs.count else { return nil }
        }
        return CachedAnswer(
            response: StoreResponse(
                .relationship(value), related: related, info: ResponseInfo(answeredBy: name, origin: storage.origin)),
            freshness: freshness, source: .relationshipFault(id, relationship: relationship.name), target: .node(id))
    }

    /// An object fault's answer: the node with its validators, or its removal when it is gone.
    func faultWrite(_ id: ObjectID, node: Node?, response: StoreResponse, now: Date) -> CacheWrite? {
        guard !response.info.notModified else { return nil }
        var write = CacheWrite()
        if var node {
            guard
                let freshness = freshness(for: id.entity, response: response, now: now, validators: true)
            else { return nil }
            node.freshness = freshness
            write.nodes = [node]
        } else {
            write.removed = [id]
        }
        write.nodes += relatedNodes(response.related, response: response, now: now)
        return write
    }

    /// A relationship fault's answer: its objects, and the value on the cached owner.
    func relationshipWrite(
        _ id: ObjectID, _ name: String, value: RelationshipValue, response: StoreResponse, now: Date,
        context: RequestContext
    ) async -> CacheWrite? {
        guard !response.info.notModified else { return nil }
        var write = CacheWrite()
        write.nodes = relatedNodes(response.related, response: response, now: now)
        if var owner = await perform("read", context: context, { try await storage.node(id) }) ?? nil {
            owner.relationships[name] = value
            write.nodes.append(owner)
        }
        return write
    }
}
