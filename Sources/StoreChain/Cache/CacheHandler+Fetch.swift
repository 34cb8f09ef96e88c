import Foundation

extension CacheHandler {
    /// A fetch; with `validators`, a revalidation from a cache above, which is answered in full
    /// from here when this cache can, and otherwise forwarded as a revalidation.
    func fetch(
        _ request: FetchRequest, ifChangedSince validators: Validators? = nil, context: RequestContext,
        next: NextResponder
    ) async throws -> StoreResponse {
        guard Self.isCacheable(request) else {
            var response = try await next(Self.conditional(.fetch(request), ifChangedSince: validators), context)
            response.info.cacheStatus = .bypassed
            return response
        }
        // What goes down is the forwarded form of the request, so the policy travels in the context.
        var scoped = context
        if scoped.cachePolicy == nil { scoped.cachePolicy = request.cachePolicy }
        let plan = try plans.plan(for: request)
        let forwarded = plan.forwarded
        let cached = await perform("read", context: scoped) { try await lookup(plan, now: scoped.clock.now) } ?? nil
        return try await serve(
            .fetch(request), cached: cached, context: scoped,
            refresh: { cached, context in
                let started = context.clock.now
                let refreshed = try await self.revalidate(cached, context: context, next: next)
                var revalidated = [cached.source]
                var anyRefreshed = refreshed != nil
                // Answer from what is stored now: fresh, or just revalidated or rewritten by this
                // refresh (a response stored already expired, `no-cache` or `max-age=0`, still
                // answers the request that fetched it); forward the request itself when that cannot.
                while true {
                    let now = context.clock.now
                    guard
                        let current = await self.perform(
                            "read", context: context, { try await self.lookup(plan, now: now) }) ?? nil
                    else { break }
                    if current.freshness.isFresh(at: now)
                        || (current.freshness.fetchedAt.map { $0 >= started } ?? false)
                    {
                        return self.answer(current, status: anyRefreshed ? .refreshed : .revalidated)
                    }
                    // An answer from several collections is as fresh as the stalest: revalidate
                    // each in turn, rather than forward a fetch they answer once current.
                    guard case .collections = current.target, !revalidated.contains(current.source) else { break }
                    revalidated.append(current.source)
                    if try await self.revalidate(current, context: context, next: next) != nil { anyRefreshed = true }
                }
                // Not stored (no-store, a failing disk): the refresh itself answers when it
                // asked the same question.
                if let refreshed, cached.source == .fetch(forwarded) {
                    return try self.answer(fromForwarded: refreshed, plan: plan.fetch, status: .refreshed)
                }
                return try await self.forwardFetch(forwarded, plan: plan.fetch, context: context, next: next)
            },
            forward: { [scoped] in
                if validators == nil, scoped.effectiveCachePolicy(for: .fetch(request)) != .reload,
                    let answered = try await self.answerLoadingReachedCollections(plan, context: scoped)
                {
                    return answered
                }
                return try await self.forwardFetch(
                    forwarded, ifChangedSince: validators, plan: plan.fetch, context: scoped, next: next)
            })
    }

    /// Dictionaries of key paths through relationships need objects a cache may not hold.
    static func isCacheable(_ request: FetchRequest) -> Bool {
        if case .dictionaries(let properties) = request.resultType { return !properties.contains { $0.contains(".") } }
        return true
    }

    /// Forwards the fetch in the form a cache stores (`FetchRequest.forwardedForCache`: objects,
    /// or the count of every match; a revalidation with `validators`), stores the answer and puts
    /// it in the form the request asked for.
    func forwardFetch(
        _ forwarded: FetchRequest, ifChangedSince validators: Validators? = nil, plan: FetchPlan,
        context: RequestContext, next: NextResponder
    ) async throws -> StoreResponse {
        let request = Self.conditional(.fetch(forwarded), ifChangedSince: validators)
        let key = "\(request)"
        let mark = saveOrder.mark()
        let forwarded = try await inFlight.run("\(key) since save \(mark)") {
            try await forwardOnce(
                key, context: context, stored: { await storedAnswer(to: forwarded, context: context) }
            ) {
                let response = try await next(request, context)
                await keep(response, of: .fetch(forwarded), readSince: mark, context: context)
                return response
            }
        }
        return try answer(fromForwarded: forwarded.response, plan: plan, status: forwarded.isStored ? .hit : .miss)
    }

    /// Puts a forwarded answer in the form the request asked for, with its prefetched objects.
    func answer(fromForwarded response: StoreResponse, plan: FetchPlan, status: CacheStatus) throws(StoreChainError)
        -> StoreResponse
    {
        if case .fetched(.count(let total)) = response.result, plan.request.resultType == .count {
            // The count of every match: the window is applied here.
            var response = response
            response.result = .fetched(.count(plan.request.windowedCount(matching: total)))
            response.info.cacheStatus = Self.status(status, below: response.info.cacheStatus)
            return response
        }
        guard !response.info.notModified, case .fetched(.objects(let nodes)) = response.result else { return response }
        var source = Dictionary(response.related.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for node in nodes { source[node.id] = node }
        var window = nodes
        if response.info.applied != .all {
            try plan.requireLoaded(nodes, source: source)
            window = plan.select(from: nodes, source: source)
        }
        var info = response.info
        info.cacheStatus = Self.status(status, below: info.cacheStatus)
        info.completeCollections = []
        info.applied = .all
        return StoreResponse(
            .fetched(plan.project(window, source: source)),
            related: source.nodes(along: plan.request.relationshipKeyPathsForPrefetching, from: window), info: info)
    }

    /// What to store of a fetch's answer: its nodes, the window of IDs, and the collections it
    /// holds whole.
    func fetchWrite(_ request: FetchRequest, result: FetchResult, response: StoreResponse, now: Date) -> CacheWrite? {
        if case .count(let total) = result, request.resultType == .count {
            return countWrite(request, total: total, response: response, now: now)
        }
        guard !response.info.notModified, response.info.applied == .all, case .objects(let nodes) = result,
            var freshness = freshness(for: request.entity, response: response, now: now, validators: true)
        else { return nil }
        freshness.validators.pages = response.info.pageValidators
        var write = CacheWrite()
        var nodeFreshness = freshness
        // An object's own freshness: the response's rules, not the listing's validators.
        nodeFreshness.validators = Validators()
        // Objects an outbox holds back (temporary IDs) are stored only where the storage keeps
        // such objects; elsewhere a listing that shows them is neither a window it can answer
        // from nor the whole collection as stored.
        let keepsAll = storage.keepsTemporaryObjects || !nodes.contains(where: \.id.isTemporary)
        write.nodes =
            Node.sharingFreshness(nodeFreshness, nodes.lazy.filter { keepsAll || !$0.id.isTemporary })
            + relatedNodes(response.related, response: response, now: now)
        write.query =
            keepsAll
            ? CachedQuery(
                request: request.normalizedForCache, ids: nodes.map(\.id),
                reachesEnd: request.fetchLimit.map { nodes.count < $0 } ?? true,
                freshness: freshness, reads: entitiesRead(by: request)) : nil
        var complete = response.info.completeCollections
        if request.predicate == nil, request.fetchOffset == 0, request.fetchLimit == nil, keepsAll {
            complete.insert(request.entity)
        }
        for entity in complete where knowsEveryToOne(of: entity, in: write.nodes) {
            // Validators belong to the request's own collection; others share its document.
            write.collections[entity] =
                entity == request.entity
                ? freshness
                : self.freshness(for: entity, response: response, now: now, validators: false)
        }
        return write
    }

    /// The entities whose changes can change the answer to `request` (`CachePlan.reachedEntities`);
    /// every entity when the request does not fit the model.
    private func entitiesRead(by request: FetchRequest) -> Set<String> {
        guard let reached = (try? plans.plan(for: request))?.reachedEntities else {
            return Set(model.entities.map(\.name))
        }
        return Set(reached)
    }

    /// What to store of a count's answer: the count (of every match: `forwardedForCache`), and
    /// the collections a terminal read whole to work it out, with their nodes.
    private func countWrite(_ request: FetchRequest, total: Int, response: StoreResponse, now: Date) -> CacheWrite? {
        guard !response.info.notModified,
            let freshness = freshness(for: request.entity, response: response, now: now, validators: false)
        else { return nil }
        var write = CacheWrite()
        write.nodes = relatedNodes(response.related, response: response, now: now)
        write.query = CachedQuery(
            request: request, ids: [], reachesEnd: true, freshness: freshness, count: total,
            reads: entitiesRead(by: request))
        for entity in response.info.completeCollections where knowsEveryToOne(of: entity, in: write.nodes) {
            write.collections[entity] = self.freshness(for: entity, response: response, now: now, validators: false)
        }
        return write
    }

    /// Whether every object of `entity` among `nodes` has a value for each of the entity's to-one
    /// relationships (none counts as a value). A listing that leaves one out, as slim list
    /// serializers leave out foreign keys, is not the whole collection a fetch or a fault could
    /// answer from: an album whose band is not known would read as having none.
    private func knowsEveryToOne(of entity: String, in nodes: [Node]) -> Bool {
        guard let toOnes = model.entity(named: entity)?.relationships.filter({ !$0.isToMany }).map(\.name),
            !toOnes.isEmpty
        else { return true }
        return nodes.allSatisfy { node in
            node.id.entity != entity || toOnes.allSatisfy { node.relationships[$0] != nil }
        }
    }

    /// The freshest answer the storage can give: from complete collections, from a cached
    /// window of the same query, or for a count, from a stored count.
    func lookup(_ plan: CachePlan, now: Date) async throws -> CachedAnswer? {
        if let byKey = try await keyAnswer(plan, now: now) { return byKey }
        var stale: [CachedAnswer] = []
        if let collection = try await collectionAnswer(plan) {
            if collection.freshness.isFresh(at: now) { return collection }
            stale.append(collection)
        }
        if let query = try await queryAnswer(plan) {
            if query.freshness.isFresh(at: now) { return query }
            stale.append(query)
        }
        if let count = try await countAnswer(plan) {
            if count.freshness.isFresh(at: now) { return count }
            stale.append(count)
        }
        // None is fresh: the one fetched last (a refresh that just stored an already expired
        // answer must find that answer); the first of those fetched at the same time.
        return stale.max { ($0.freshness.fetchedAt ?? .distantPast) < ($1.freshness.fetchedAt ?? .distantPast) }
    }

    /// Answers a count from the count a terminal gave for the same predicate.
    private func countAnswer(_ plan: CachePlan) async throws -> CachedAnswer? {
        guard plan.fetch.request.resultType == .count else { return nil }
        let counted = try await storage.queries(shape: CachedQuery.shape(of: plan.forwarded))
        guard let stored = counted.first(where: { $0.count != nil }), let total = stored.count else { return nil }
        let response = StoreResponse(
            .fetched(.count(plan.fetch.request.windowedCount(matching: total))),
            info: ResponseInfo(answeredBy: name, origin: storage.origin))
        return CachedAnswer(
            response: response, freshness: stored.freshness, source: .fetch(stored.request),
            target: .query(key: stored.key))
    }

    /// Answers a fetch by key (`id IN {…}`, `id == 3`: a batch of faults, the related objects a
    /// key path needs) from cached objects, when every one asked for is cached and fresh.
    private func keyAnswer(_ cachePlan: CachePlan, now: Date) async throws -> CachedAnswer? {
        let plan = cachePlan.fetch
        guard let keys = plan.predicate?.predicate.keys(of: plan.entity) else { return nil }
        let ids = Set(keys.map { ObjectID(entity: plan.entity.name, key: $0) })
        guard !ids.isEmpty else { return nil }
        let found = try await storage.nodes(Array(ids))
        guard found.count == ids.count, plan.firstUnloaded(found.values, source: found) == nil else { return nil }
        var expiresAt: Date?
        for node in found.values {
            guard let freshness = node.freshness, freshness.isFresh(at: now) else { return nil }
            if let expiry = freshness.expiresAt { expiresAt = min(expiresAt ?? expiry, expiry) }
        }
        let window = plan.select(from: found.values, source: found)
        return try await cachedFetch(
            window, plan: plan, source: found, freshness: Freshness(fetchedAt: now, expiresAt: expiresAt),
            from: .fetch(cachePlan.normalized), target: .query(key: cachePlan.normalized.description))
    }

    /// Answers from a cached window of the same query that covers the requested window.
    private func queryAnswer(_ plan: CachePlan) async throws -> CachedAnswer? {
        let request = plan.fetch.request
        let windows = try await storage.queries(shape: plan.shape).sorted {
            ($0.freshness.expiresAt ?? .distantFuture) > ($1.freshness.expiresAt ?? .distantFuture)
        }
        for query in windows {
            guard let ids = query.slice(offset: request.fetchOffset, limit: request.fetchLimit) else { continue }
            guard let window = try await storage.nodes(inWindow: ids, ofQuery: query.key) else { continue }
            // As for a collection: the window is indexed by ID only when the fetch may follow
            // relationships.
            let source = plan.readsOwnAttributesOnly ? Dataset() : Dataset(window)
            return try await cachedFetch(
                window, plan: plan.fetch, source: source, freshness: query.freshness, from: .fetch(query.request),
                target: .query(key: query.key))
        }
        return nil
    }

    /// Answers any fetch locally when the whole collection of its entity, and of every entity
    /// its predicate and sort reach, is cached.
    private func collectionAnswer(_ cachePlan: CachePlan) async throws -> CachedAnswer? {
        let plan = cachePlan.fetch
        let request = plan.request
        let entities = cachePlan.reachedEntities
        var stalest: (entity: String, freshness: Freshness)?
        for entity in entities {
            guard let freshness = try await storage.collection(entity) else { return nil }
            let expiry = freshness.expiresAt ?? .distantFuture
            if stalest.map({ expiry < ($0.freshness.expiresAt ?? .distantFuture) }) ?? true {
                stalest = (entity, freshness)
            }
        }
        guard let stalest else { return nil }
        var nodes: [Node]
        if entities.count == 1 {
            nodes = try await storage.nodes(of: request.entity, matching: plan.predicate?.predicate)
        } else {
            nodes = []
            for entity in entities { nodes += try await storage.nodes(of: entity, matching: nil) }
        }
        return try await collectionAnswer(
            cachePlan, fromWhole: nodes, of: entities, freshness: stalest.freshness, named: stalest.entity)
    }

    /// Answers a fetch from `nodes`, the whole collections of `entities` (of the fetched entity
    /// alone, they may be only those its predicate matches); `nil` when they name objects they
    /// do not hold. `named` is the collection whose freshness the answer has.
    func collectionAnswer(
        _ cachePlan: CachePlan, fromWhole nodes: [Node], of entities: [String], freshness: Freshness,
        named collection: String
    ) async throws -> CachedAnswer? {
        let plan = cachePlan.fetch
        let request = plan.request
        var nodes = nodes
        if entities.count > 1 { nodes = model.fillingMissingInverses(of: nodes, completeEntities: Set(entities)) }
        // Following relationships needs the objects indexed by ID; a fetch that reads only the
        // entity's own attributes does not (indexing them cost a third of answering it).
        let source = cachePlan.readsOwnAttributesOnly ? Dataset() : Dataset(nodes)
        // Checked before filtering, so the usual case (one entity's nodes) is not copied.
        let isOfEntity = { (node: Node) in node.id.entity == request.entity }
        let candidates = nodes.allSatisfy(isOfEntity) ? nodes : nodes.filter(isOfEntity)
        // A collection that names objects it no longer holds cannot answer; the backend can.
        guard plan.firstUnloaded(candidates, source: source) == nil else { return nil }
        let window = plan.select(from: candidates, source: source)
        return try await cachedFetch(
            window, plan: plan, source: source, freshness: freshness,
            from: .fetch(FetchRequest(entity: collection)), target: .collections([collection]))
    }

    private func cachedFetch(
        _ window: [Node], plan: FetchPlan, source: some NodeSource, freshness: Freshness, from request: StoreRequest,
        target: CacheTarget
    ) async throws -> CachedAnswer {
        let keyPaths = plan.request.relationshipKeyPathsForPrefetching
        let known = NodeOverlay(try await reach(keyPaths, from: window, source: source), over: source)
        let response = StoreResponse(
            .fetched(plan.project(window, source: known)),
            related: keyPaths.isEmpty ? [] : known.nodes(along: keyPaths, from: window),
            info: ResponseInfo(answeredBy: name, origin: storage.origin))
        return CachedAnswer(response: response, freshness: freshness, source: request, target: target)
    }

    /// The cached objects along prefetch key paths that `source` does not hold (those present;
    /// faults load the rest).
    private func reach(_ keyPaths: [String], from nodes: [Node], source: some NodeSource) async throws
        -> [ObjectID: Node]
    {
        var reached: [ObjectID: Node] = [:]
        for keyPath in keyPaths {
            var level = nodes
            for name in keyPath.split(separator: ".").map(String.init) {
                let ids = level.flatMap { $0.relationships[name]?.objectIDs ?? [] }
                let missing = Array(Set(ids.filter { reached[$0] == nil && source.node(for: $0) == nil }))
                if !missing.isEmpty { reached.merge(try await storage.nodes(missing)) { first, _ in first } }
                level = ids.compactMap { reached[$0] ?? source.node(for: $0) }
            }
        }
        return reached
    }
}
