/// Loads what a fetch reads besides its own records: the relationships and related objects its
/// key paths, sort, chosen properties and prefetching need, the cheapest way the backend allows
/// (a whole collection in hand, the caches, a batch, one request per owner or key, or the
/// destination's whole listing), as the terminal describes its backend (`BackendReads`; a
/// terminal that does not gets one relationship fault per owner and one fetch by keys per hop).
///
/// Each read is a request through the chain from the top, so the caches answer what they hold
/// and rate limiting, retry and logging see the rest. The pager at the seam uses it for what a
/// fetch's pages left out (`PageEvaluation`, `PageWalk`) and for the faults a terminal has no
/// single exchange for (`FaultFallback`); a terminal makes one exchange per request and never
/// needs it (the REST adapter's `explain` reads its estimates).
package struct RelatedLoader: Sendable {
    package let model: ObjectModel
    /// What the terminal says of its backend's reads; `nil`: the plain way.
    package let backend: (any BackendReads)?

    package init(model: ObjectModel, backend: (any BackendReads)?) {
        self.model = model
        self.backend = backend
    }

    /// How `entity`'s records carry `name`.
    package func relationshipSource(_ name: String, of entity: String) -> RelationshipSource {
        backend?.relationshipSource(name, of: entity) ?? .ownRequest("as a relationship fault")
    }

    /// Whether the backend applies some of `predicate` reading `entity`; throws when it cannot
    /// read `entity` by it.
    package func pushesDown(_ predicate: FetchPredicate, of entity: String) throws -> Bool {
        try backend?.pushesDown(predicate, of: entity) ?? true
    }

    /// Loads the relationships along `path` for `nodes` and the objects they lead to (as far as
    /// `path.objectHops`); an entity
    /// whose whole collection is in hand (`whole`) is read from it, with no request. `repeats`
    /// is how many times the fetch will make this read (once per page of its listing), so that
    /// reading a destination's whole listing once is weighed against the requests all of them
    /// would make.
    package func follow(
        _ path: LoadPath, from nodes: inout [Node], source: inout [ObjectID: Node], whole: [String: [Node]] = [:],
        repeats: Int = 1, context: RequestContext, serving parent: StoreRequest
    ) async throws {
        var level = nodes.map(\.id)
        var entityName = nodes.first?.id.entity ?? ""
        for (index, name) in path.names.enumerated() {
            guard let entity = model.entity(named: entityName), let relationship = entity.relationship(named: name),
                let destination = model.entity(named: relationship.destination)
            else { return }
            let owners = level.compactMap { source[$0] }
            let unknown = owners.filter { $0.relationships[name] == nil }
            let members = whole[destination.name]
            if !unknown.isEmpty {
                let values =
                    if let members, inverseForeignKey(of: relationship, destination: destination) != nil {
                        group(members, of: unknown.map(\.id), through: relationship, source: &source)
                    } else {
                        try await relationshipValues(
                            name, of: unknown.map(\.id), entity: entity, source: &source, repeats: repeats,
                            context: context, serving: parent)
                    }
                for (owner, value) in values { source[owner]?.relationships[name] = value }
            }
            guard index < path.objectHops else { break }
            let targets = Array(Set(level.compactMap { source[$0]?.relationships[name]?.objectIDs }.flatMap { $0 }))
            // A whole collection in hand holds every object there is: none is missing from it.
            let missing = members == nil ? targets.filter { source[$0] == nil } : []
            if !missing.isEmpty {
                for node in try await fetchNodes(
                    destination, keys: missing.compactMap(\.key), repeats: repeats, context: context, serving: parent)
                {
                    source[node.id] = node
                }
                // The caches answer by key from a whole collection they hold; an object saved
                // since they took it (an album a save inserted while this fetch read the tracks
                // that point at it) is not in it. What they lack is asked for past them.
                let unknown = missing.filter { source[$0] == nil }
                if !unknown.isEmpty {
                    var reload = context
                    reload.cachePolicy = .reload
                    for node in try await fetchNodes(
                        destination, keys: unknown.compactMap(\.key), context: reload, serving: parent)
                    {
                        source[node.id] = node
                    }
                }
            }
            level = targets
            entityName = destination.name
        }
        nodes = nodes.map { source[$0.id] ?? $0 }
    }

    /// The objects of `entity` with these keys, in as few requests as the endpoints allow.
    package func fetchNodes(
        _ entity: EntityDescription, keys: [Value], repeats: Int = 1, context: RequestContext,
        serving parent: StoreRequest
    ) async throws -> [Node] {
        try await fetchWhere(
            entity, keyPath: [entity.key], equalsAnyOf: keys, repeats: repeats, context: context, serving: parent)
    }

    /// The objects of `entity` whose `keyPath` is one of `values`, the cheapest way: one fetch
    /// of the whole list (a batch endpoint, or the listing filtered in memory), one fetch per
    /// value when only an endpoint that takes one value can push it down, or the entity's whole
    /// listing when that costs fewer requests than the pushed-down reads would make over
    /// `repeats` calls (`listingEstimate`; the caches then hold the whole collection and answer
    /// the calls after it). Each fetch is a sub-request through the chain, so caches answer it.
    package func fetchWhere(
        _ entity: EntityDescription, keyPath: [String], equalsAnyOf values: [Value], repeats: Int = 1,
        context: RequestContext,
        serving parent: StoreRequest
    ) async throws -> [Node] {
        guard !values.isEmpty else { return [] }
        let list = FetchPredicate.comparison(Comparison(.keyPath(keyPath), .in, .array(values.map(Operand.constant))))
        let filter = try CompiledPredicate(list, entity: entity.name, model: model)
        // `nil`: nothing may take the list (an entity read only by its get endpoint).
        let listPushed = try? pushesDown(filter.predicate, of: entity.name)
        var predicates: [FetchPredicate?] = [filter.predicate]
        // The requests the backend's own choice is expected to make over every call.
        var expected = listPushed == true ? repeats : nil
        if listPushed != true,
            (try? pushesDown(
                .comparison(Comparison(.keyPath(keyPath), .equal, .constant(values[0]))), of: entity.name)) == true
        {
            predicates = values.map { .comparison(Comparison(.keyPath(keyPath), .equal, .constant($0))) }
            expected = values.count * repeats
        } else if listPushed == nil {
            // Neither: the backend says why.
            _ = try pushesDown(filter.predicate, of: entity.name)
        }
        if let expected, expected >= Self.listingThreshold {
            if context.cachePolicy != .reload,
                let cached = try await cachedMatches(
                    FetchRequest(entity: entity.name, predicate: filter.predicate), context: context, serving: parent)
            {
                return cached.filter { filter.evaluate($0, in: [:]) }
            }
            if let listing = try await listingEstimate(of: entity, probe: true, context: context, serving: parent),
                listingCost(listing, of: entity, repeats: repeats, context: context) < expected
            {
                // Fewer pages than requests: read the whole listing once; the caches keep it whole.
                predicates = [nil]
            }
        }
        var found: [Node] = []
        var embedded: [Node] = []
        for predicate in predicates {
            var request = FetchRequest(entity: entity.name)
            request.predicate = predicate
            let response = try await context.subrequestThroughChain(.fetch(request), serving: parent)
            found += try response.fetchedObjects(for: request)
            embedded += response.related
        }
        let source = Dictionary(embedded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return found.filter { filter.evaluate($0, in: source) }
    }

    /// The values of a relationship the records did not carry: from its own endpoint, or from
    /// the inverse foreign key on the destination.
    package func relationshipValues(
        _ name: String, of owners: [ObjectID], entity: EntityDescription, source: inout [ObjectID: Node],
        repeats: Int = 1,
        context: RequestContext, serving parent: StoreRequest
    ) async throws -> [ObjectID: RelationshipValue] {
        guard let relationship = entity.relationship(named: name),
            let destination = model.entity(named: relationship.destination)
        else { return [:] }
        var result: [ObjectID: RelationshipValue] = [:]
        let carried = relationshipSource(name, of: entity.name)
        if case .ownRequest = carried {
            if owners.count > 1,
                let members = try await cachedMembers(
                    of: owners, through: relationship, destination: destination, context: context, serving: parent)
            {
                return group(members, of: owners, through: relationship, source: &source)
            }
            // One request (or more) per owner, at every call: weighed against the destination's
            // whole listing, read once (a fetch through the chain, which the caches then hold
            // whole, so the calls after it are answered by `cachedMembers`).
            let perOwner = owners.count * repeats
            if perOwner >= Self.listingThreshold,
                let keyPath = destinationListing(of: relationship, destination: destination),
                let listing = try await listingEstimate(
                    of: destination, probe: true, context: context, serving: parent),
                listingCost(listing, of: destination, repeats: repeats, context: context) < perOwner
            {
                let members = try await fetchWhere(
                    destination, keyPath: keyPath, equalsAnyOf: owners.compactMap(\.key), context: context,
                    serving: parent)
                return group(members, of: owners, through: relationship, source: &source)
            }
            for owner in owners {
                // Each owner's list is a relationship fault through the chain, so caches keep
                // it; the chain's pager reads its pages.
                let response = try await context.subrequestThroughChain(
                    .relationshipFault(owner, relationship: name), serving: parent)
                result[owner] = try response.relationshipValue()
                for node in response.related { source[node.id] = node }
            }
            return result
        }
        if let inverseName = relationship.inverse, let inverse = destination.relationship(named: inverseName),
            !inverse.isToMany
        {
            let members = try await fetchWhere(
                destination, keyPath: [inverseName, entity.key], equalsAnyOf: owners.compactMap(\.key),
                repeats: repeats, context: context, serving: parent)
            return group(members, of: owners, through: relationship, source: &source)
        }
        let named =
            owners.prefix(3).map(\.description).joined(separator: ", ")
            + (owners.count > 3 ? " and \(owners.count - 3) more" : "")
        guard carried != .unmapped else {
            throw StoreChainError(
                .noEndpoint, "cannot read '\(entity.name).\(name)' from the backend (needed for \(named))",
                suggestion: "map it as a foreign key, an embedded record or its own endpoint")
        }
        guard backend?.readsObjectsByKey(of: entity.name) ?? true else {
            throw StoreChainError(
                .noEndpoint,
                "the records of \(named) leave out '\(entity.name).\(name)' (mapped \(carried.described)), and \(entity.name) has no"
                    + " get endpoint to read it from",
                suggestion: "declare \(entity.name)'s get endpoint, or fetch from an endpoint whose records carry it")
        }
        // The listing left out what each object's own record carries (a slim list serializer):
        // each owner is read again by key, through the chain past the caches (which hold the slim
        // record), so they keep the whole one.
        context.logger.notice(
            "remote: the records of \(named) leave out '\(entity.name).\(name)'; reading each by key",
            metadata: ["requests": "\(owners.count)"])
        for owner in owners {
            let response = try await context.subrequestThroughChain(
                .objectFault(owner), serving: parent, cachePolicy: .reload)
            for node in response.related { source[node.id] = node }
            guard let node = try response.objectNode() else { continue }
            guard let value = node.relationships[name] else {
                throw StoreChainError(
                    .noEndpoint,
                    "\(owner)'s own record leaves out '\(entity.name).\(name)' (mapped \(carried.described)) too, as its listing does",
                    suggestion: Self.leftOutSuggestion(entity.name))
            }
            source[owner] = node
            result[owner] = value
        }
        return result
    }

    /// The other way to read an endpoint relationship's lists: the destination's whole listing,
    /// grouped by the foreign key its records carry for the to-one inverse, which this returns.
    /// `nil` when the records carry no such key, or when the destination's endpoints would push
    /// the owners' keys down one at a time (as many requests as reading each owner's list).
    package func destinationListing(of relationship: RelationshipDescription, destination: EntityDescription)
        -> [String]?
    {
        guard let keyPath = inverseForeignKey(of: relationship, destination: destination) else { return nil }
        let key = Operand.constant(.integer(0))
        for byOwner in [Comparison(.keyPath(keyPath), .in, .array([key])), Comparison(.keyPath(keyPath), .equal, key)]
        where (try? pushesDown(.comparison(byOwner), of: destination.name)) == true {
            return nil
        }
        return keyPath
    }

    /// The key path of the owner's key on the destination (`album.id` for `Album.tracks`), when
    /// the destination's records carry the to-one inverse as a foreign key, so that its objects
    /// can be grouped by owner.
    package func inverseForeignKey(of relationship: RelationshipDescription, destination: EntityDescription)
        -> [String]?
    {
        guard let inverseName = relationship.inverse, let inverse = destination.relationship(named: inverseName),
            !inverse.isToMany, case .keyInRecord = relationshipSource(inverseName, of: destination.name),
            let ownerEntity = model.entity(named: inverse.destination)
        else { return nil }
        return [inverseName, ownerEntity.key]
    }

    /// Each owner's value of `relationship`, from the destination objects whose to-one inverse
    /// names it.
    private func group(
        _ members: [Node], of owners: [ObjectID], through relationship: RelationshipDescription,
        source: inout [ObjectID: Node]
    ) -> [ObjectID: RelationshipValue] {
        var grouped: [ObjectID: [ObjectID]] = [:]
        for member in members {
            source[member.id] = member
            if let inverse = relationship.inverse, case .toOne(let owner?)? = member.relationships[inverse] {
                grouped[owner, default: []].append(member.id)
            }
        }
        var result: [ObjectID: RelationshipValue] = [:]
        for owner in owners {
            let ids = grouped[owner] ?? []
            result[owner] = relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
        }
        return result
    }

    /// The destination objects of several owners' lists, when the caches hold them whole and
    /// fresh: the destination's records carry the inverse as a foreign key, so a cached complete
    /// collection answers `Track where album.id IN {…}` with no request, where reading each
    /// owner's list would cost one request (or more) per owner. `nil` when the caches cannot.
    private func cachedMembers(
        of owners: [ObjectID], through relationship: RelationshipDescription, destination: EntityDescription,
        context: RequestContext,
        serving parent: StoreRequest
    ) async throws -> [Node]? {
        guard let keyPath = inverseForeignKey(of: relationship, destination: destination) else { return nil }
        let keys = owners.compactMap(\.key).map(Operand.constant)
        return try await cachedMatches(
            FetchRequest(
                entity: destination.name, predicate: .comparison(Comparison(.keyPath(keyPath), .in, .array(keys)))),
            context: context, serving: parent)
    }

    /// The objects a fetch matches when the caches answer it fresh (asked with `.cacheOnly`, so
    /// it never goes upstream); `nil` when they cannot, or outside a chain.
    package func cachedMatches(_ request: FetchRequest, context: RequestContext, serving parent: StoreRequest)
        async throws
        -> [Node]?
    {
        guard
            case .objects(let members)? = try await cachedAnswer(
                request, acceptingStale: false, context: context, serving: parent)
        else { return nil }
        return members
    }

    /// What the caches answer for `request`, asked with `.cacheOnly` so it never goes upstream;
    /// `nil` when they cannot, when the answer is stale and `acceptingStale` is false, or outside
    /// a chain.
    package func cachedAnswer(
        _ request: FetchRequest, acceptingStale: Bool, context: RequestContext, serving parent: StoreRequest
    ) async throws -> FetchResult? {
        do {
            guard
                let response = try await context.subrequest(.fetch(request), serving: parent, cachePolicy: .cacheOnly),
                acceptingStale || !response.info.isStale
            else { return nil }
            return try response.fetchResult()
        } catch let error as StoreChainError where error.code == .notCached {
            return nil
        }
    }
}

extension RelatedLoader {
    /// What to do when an object's own record leaves a relationship out.
    package static func leftOutSuggestion(_ entity: String) -> String {
        "map it as it is written in the records, or give it its own endpoint; if the backend leaves out fields whose"
            + " value is null, declare 'omits-nulls: true' for \(entity)"
    }
}
