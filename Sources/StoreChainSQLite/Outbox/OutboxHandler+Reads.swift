import StoreChain

extension OutboxHandler {
    /// Answers a read while saves wait in the outbox, so the app reads its own writes: what the
    /// backend answers is shown with the held saves applied over it, and the whole request is
    /// evaluated again over that.
    ///
    /// - A fetch of an entity the held saves change goes down without its window and result
    ///   form (the held saves can move objects into or out of any window); objects the saves
    ///   changed that the backend left out are read one by one, held inserts join, held deletes
    ///   leave, and the predicate, order, window and form are applied here. When the saves
    ///   change objects the predicate reads through a relationship, the predicate goes down
    ///   neither (the backend would test the old values).
    /// - A fault of an object a held save inserted or deleted is answered here; one it updated
    ///   or whose lists it changes is forwarded and shown with the save applied.
    ///
    /// A replay that sends saves while the backend answers (a successful page starts one)
    /// makes the answer mix states: the read is made again, up to three times, until no save was
    /// sent during it. So is one that found an object it refers to gone (a replay, or another
    /// client, deleted it between the listing and the read of the object).
    func read(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse?
    {
        var answer: StoreResponse?
        for attempt in 1...3 {
            let (view, generation) = state.withLock { ($0.writes.view(model: model), $0.writes.generation) }
            do {
                answer = try await read(request, view: view, context: context, next: next)
            } catch let error as StoreChainError where error.code == .incompleteData && attempt < 3 {
                continue
            }
            if state.withLock({ $0.writes.generation }) == generation { break }
        }
        return answer
    }

    private func read(
        _ request: StoreRequest, view: PendingView, context: RequestContext, next: NextResponder
    ) async throws -> StoreResponse? {
        switch request {
        case .fetch(let fetch):
            return try await self.fetch(fetch, view: view, context: context, next: next)
        case .objectFault(let id):
            return try await objectFault(id, view: view, context: context, next: next)
        case .relationshipFault(let id, let name):
            return try await relationshipFault(id, name, view: view, context: context, next: next)
        case .revalidation(let inner, _) where !view.entities.isDisjoint(with: inner.entities):
            // A "not modified" would keep an answer without the held saves: ask for it whole.
            if let answer = try await read(inner, view: view, context: context, next: next) { return answer }
            return try await next(inner, context)
        default:
            return nil
        }
    }

    private func fetch(_ request: FetchRequest, view: PendingView, context: RequestContext, next: NextResponder)
        async throws -> StoreResponse?
    {
        // Held saves to objects the predicate reaches through relationships (`band.name` reaches
        // bands) change which objects match.
        let throughRelationships = model.entities(along: request.predicate?.keyPaths ?? [], from: request.entity)
        guard !view.entities.isDisjoint(with: throughRelationships.union([request.entity])) else { return nil }
        let plan = try FetchPlan.planned(request, model: model)
        var wide = request
        wide.fetchLimit = nil
        wide.fetchOffset = 0
        wide.resultType = .objects
        if !view.entities.isDisjoint(with: throughRelationships) { wide.predicate = nil }
        let response = try await next(.fetch(wide), context)
        guard case .fetched(.objects(let answered)) = response.result else {
            throw StoreChainError(
                .invalidResponse,
                "'\(response.info.answeredBy)' did not answer a fetch of objects with objects",
                suggestion: "a handler must answer each request with the matching kind of response")
        }
        var source: [ObjectID: Node] = [:]
        for node in response.related { source[node.id] = view.show(node) }
        var candidates: [Node] = []
        var seen = Set<ObjectID>()
        for node in answered where seen.insert(node.id).inserted {
            if let shown = view.show(node) { candidates.append(shown) }
        }
        // Objects the held saves changed may match now although the backend left them out.
        for id in view.changedObjects(of: request.entity) where seen.insert(id).inserted {
            if let node = try await fault(id, serving: .fetch(request), context: context),
                let shown = view.show(node)
            {
                candidates.append(shown)
            }
        }
        for node in view.inserted(of: request.entity) where seen.insert(node.id).inserted { candidates.append(node) }
        for node in candidates { source[node.id] = node }
        try await loadRelated(of: candidates, plan: plan, view: view, into: &source, context: context, next: next)
        let window = plan.select(from: candidates, source: source)
        var info = response.info
        info.applied = .all
        info.completeCollections.subtract(view.entities)
        let paths = request.relationshipKeyPathsForPrefetching + plan.readPaths.map { $0.joined(separator: ".") }
        return StoreResponse(
            .fetched(plan.project(window, source: source)), related: source.nodes(along: paths, from: window),
            info: info)
    }

    private func objectFault(_ id: ObjectID, view: PendingView, context: RequestContext, next: NextResponder)
        async throws -> StoreResponse?
    {
        if view.isDeleted(id) { return local(.object(nil)) }
        if let inserted = view.show(id: id) { return local(.object(inserted)) }
        guard view.entities.contains(id.entity) else { return nil }
        var response = try await next(.objectFault(id), context)
        if case .object(let node?) = response.result { response.result = .object(view.show(node)) }
        response.related = response.related.compactMap(view.show)
        return response
    }

    private func relationshipFault(
        _ id: ObjectID, _ name: String, view: PendingView, context: RequestContext, next: NextResponder
    ) async throws -> StoreResponse? {
        let request = StoreRequest.relationshipFault(id, relationship: name)
        var value: RelationshipValue
        var related: [ObjectID: Node] = [:]
        var info: ResponseInfo
        if let inserted = view.show(id: id) {
            // The backend does not know the object yet.
            let isToMany = model.entity(named: id.entity)?.relationship(named: name)?.isToMany ?? false
            value = view.adjust(inserted.relationships[name] ?? (isToMany ? .toMany([]) : .toOne(nil)), name, of: id)
            info = ResponseInfo(answeredBy: self.name, origin: .outbox)
        } else if view.changes(name, of: id) {
            let response = try await next(request, context)
            value = view.adjust(try response.relationshipValue(), name, of: id)
            if let update = view.show(Node(id: id)), let own = update.relationships[name] {
                value = own
            }
            for node in response.related { related[node.id] = view.show(node) }
            info = response.info
        } else {
            return nil
        }
        var nodes: [Node] = []
        for target in value.objectIDs {
            if let node = related[target] ?? view.show(id: target) {
                nodes.append(node)
            } else if let node = try await fault(target, serving: request, context: context),
                let shown = view.show(node)
            {
                nodes.append(shown)
            }
        }
        return StoreResponse(.relationship(value), related: nodes, info: info)
    }

    /// Reads the related objects evaluating the request needs that the answer did not include
    /// (a held save points a relationship at another object), through the whole chain.
    private func loadRelated(
        of candidates: [Node], plan: FetchPlan, view: PendingView, into source: inout [ObjectID: Node],
        context: RequestContext, next: NextResponder
    ) async throws {
        var tried = Set<ObjectID>()
        while let (_, _, missing) = plan.firstUnloaded(candidates, source: source), tried.insert(missing).inserted {
            var shown = view.show(id: missing)
            if shown == nil, !view.isDeleted(missing),
                let node = try await fault(missing, serving: .fetch(plan.request), context: context)
            {
                shown = view.show(node)
            }
            guard let shown else { break }
            source[missing] = shown
        }
        try plan.requireLoaded(candidates, source: source)
    }

    /// One object, through the whole chain so the caches can answer.
    private func fault(_ id: ObjectID, serving parent: StoreRequest, context: RequestContext) async throws -> Node? {
        try await context.subrequestThroughChain(.objectFault(id), serving: parent).objectNode()
    }

    private func local(_ result: StoreResponse.Result) -> StoreResponse {
        StoreResponse(result, info: ResponseInfo(answeredBy: name, origin: .outbox))
    }
}

extension OutboxHandler {
    /// The held saves shown over the states a change made elsewhere carries, as reads show them:
    /// an object a held save deletes is left out, one it updates takes the update, and lists
    /// take the objects held saves move into and out of them.
    public func showingHeldSaves(_ change: ChangeEvent) -> ChangeEvent {
        guard !change.nodes.isEmpty else { return change }
        let view = state.withLock { $0.writes.view(model: model) }
        var shown = change
        shown.nodes = change.nodes.compactMap(view.show)
        return shown
    }
}
