import Foundation
import StoreChain

extension RemoteResponder {
    /// Maps a list response body to nodes the way a fetch does: the entity's records path,
    /// field mapping and conversions. Errors name `source`, the JSON path and the field.
    public func nodes(fromResponseBody body: Data, entity entityName: String, source: String = "response")
        throws(StoreChainError)
        -> [Node]
    {
        let entity = try model.requireEntity(entityName)
        let json = try JSONParser().parse(body, source: source)
        let path = mapper.options(for: entityName).records
        var nodes: [Node] = []
        for (index, record) in try mapper.records(in: json, at: path, source: source).enumerated() {
            nodes.append(
                try mapper.node(
                    from: record, entity: entity, jsonPath: "$\(path.map { ".\($0)" } ?? "")[\(index)]", source: source
                ).node)
        }
        return nodes
    }

    /// What loading one plan produced.
    struct Loaded {
        var nodes: [Node] = []
        var embedded: [Node] = []
        var pages = 0
        var skipped = 0
        /// What the last exchange said (headers, status, rate limit), as `HTTPMetadata` reads it.
        var last: ResponseInfo?
        /// As fresh as the least fresh page read.
        var freshness: ResponseFreshness?
        var notModified = false
        /// The one document the listing was, when it was not paged.
        var document: (url: URL, response: TransportResponse)?
        /// Read with `firstDocumentOnly`: the document announced a next page, which was not read.
        var announcesNextPage = false
    }

    /// Answers a fetch, or one page of it when a pager asks for `page` (an endpoint that does
    /// not page answers the whole fetch). It is conditional by the page's validators, or for a
    /// whole fetch by `validators` (a revalidation).
    ///
    /// A listing is always read one page request at a time: a whole fetch goes to a pager
    /// (`walkPages`), and an endpoint declared without paging whose document announces a next
    /// page (`Link: rel="next"`) is answered as the first page of a `Link`-paged listing.
    func fetch(
        _ request: FetchRequest, page: PageRequest?, ifChangedSince validators: Validators? = nil,
        context: RequestContext
    ) async throws -> StoreResponse {
        // A page is conditional by its own validators only.
        let validators = page == nil ? validators : page?.validators
        let plan = try FetchPlan(request, model: model)
        let queryPlan = try planner(for: request.entity).plan(
            predicate: plan.predicate?.predicate, sort: request.sortDescriptors)
        if !queryPlan.endpoint.single {
            guard let page else {
                return try await walkPages(of: request, ifChangedSince: validators, context: context)
            }
            if let paging = queryPlan.endpoint.paging {
                return try await fetchPage(
                    page, paging: paging, request: request, plan: plan, queryPlan: queryPlan, context: context)
            }
            if case .token = page.position {
                // A later page of a listing that announced it pages.
                return try await fetchPage(
                    page, paging: .link, request: request, plan: plan, queryPlan: queryPlan, context: context)
            }
        }
        let loaded = try await load(
            queryPlan, entity: plan.entity, ifChangedSince: validators, firstDocumentOnly: page != nil,
            context: context)
        if let (url, response) = loaded.document, loaded.announcesNextPage {
            // Declared without paging, but it pages: this is the first page of a `Link` listing.
            return try await answerPage(
                response, from: url, style: .link, paging: .link, start: 0, size: 0, request: request, plan: plan,
                queryPlan: queryPlan, context: context)
        }
        if queryPlan.pushed.isEmpty, !queryPlan.endpoint.single, !loaded.notModified, loaded.pages > 0 {
            let records = loaded.nodes.count + loaded.skipped
            listingSizes.learn(
                plan.entity.name, records: records, pageSize: max(1, (records + loaded.pages - 1) / loaded.pages))
        }
        var info = loaded.last ?? ResponseInfo(answeredBy: name, origin: .remote)
        info.exchanges = loaded.pages
        info.freshness = loaded.freshness
        info.describe(queryPlan)
        info.pagesRead = loaded.pages
        info.skippedRecords = loaded.skipped
        if loaded.notModified {
            info.notModified = true
            return StoreResponse(.fetched(.objects([])), info: info)
        }
        var source = Dictionary(loaded.embedded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var nodes = loaded.nodes
        for node in nodes { source[node.id] = node }
        // The whole collections it read anyway answer key paths into them, and go up to the
        // caches, which then answer any later fetch of those entities locally.
        let collections = completeCollections(fetched: plan.entity, plan: queryPlan, loaded: loaded)
        for node in collections.values.joined() where source[node.id] == nil { source[node.id] = node }
        let paths = neededKeyPaths(request, entity: plan.entity)
        for path in paths {
            try await follow(
                path, from: &nodes, source: &source, whole: collections, context: context, serving: .fetch(request))
        }
        try plan.requireLoaded(nodes, source: source)
        let result = plan.execute(over: nodes, source: source)
        var related: [Node] = []
        if case .objects(let objects) = result, !paths.isEmpty {
            // Every object the answer was computed over, so a handler above can check it again.
            related = source.nodes(along: paths.map { $0.joined(separator: ".") }, from: objects)
        }
        var known = Set(related.map(\.id))
        if case .objects(let objects) = result { known.formUnion(objects.map(\.id)) }
        for node in collections.values.joined() where known.insert(node.id).inserted {
            related.append(source[node.id] ?? node)
        }
        info.completeCollections = Set(collections.keys)
        return StoreResponse(.fetched(result), related: related, info: info)
    }

    /// Answers a whole fetch from an endpoint that pages, one page at a time, each page a request
    /// of its own (`StoreRequest.page`) sent through the whole chain, so that retry, rate
    /// limiting, logging and metrics see every page (a failed page is retried alone) and only the
    /// pages a window needs are read. The walk is the pagination handler's, one page at a time;
    /// a pipeline tunes it (page size, pages at once) with a pagination handler of its own.
    private func walkPages(of request: FetchRequest, ifChangedSince validators: Validators?, context: RequestContext)
        async throws -> StoreResponse
    {
        let parent = StoreRequest.fetch(request)
        let pager = PaginationHandler(
            model: model, options: PaginationOptions(maxPages: options.maxPages, concurrency: 1))
        let walked = validators.map { StoreRequest.revalidation(parent, $0) } ?? parent
        let readPage = NextResponder { page, pageContext in
            if let response = try await pageContext.subrequest(page, serving: parent) { return response }
            // No chain above (the responder called on its own): read the page directly.
            return try await self.respond(to: page, context: pageContext)
        }
        return try await pager.handle(walked, context: context, next: readPage)
    }

    /// Reads a plan's listing and maps the records: every page of it (a responder called
    /// outside a chain, which has no pages to send), or with `firstDocumentOnly` the first
    /// document, saying whether it announced a next page. Only the first exchange is
    /// conditional (`validators`): they are one document's.
    func load(
        _ plan: QueryPlanner.Plan, entity: Entity, ifChangedSince validators: Validators? = nil,
        firstDocumentOnly: Bool = false, context: RequestContext
    ) async throws -> Loaded {
        var loaded = Loaded()
        var values = plan.values
        var nextURL: URL?
        var seen: Set<ObjectID> = []
        let recordsPath = plan.endpoint.records ?? mapper.options(for: entity.name).records
        switch plan.endpoint.paging {
        case .pages(let page, let perPage, let size, let first)?:
            values[page] = String(first)
            values[perPage] = String(size)
        case .offset(let offset, let limit, let size)?:
            values[offset] = "0"
            values[limit] = String(size)
        case .cursor(_, _, let limit, let size)?:
            if let limit { values[limit] = String(size) }
        case .link?, nil: break
        }
        while true {
            try Task.checkCancellation()
            try checkPageCount(loaded.pages, of: plan.endpoint.request)
            let url = try nextURL ?? plan.template.url(base: options.baseURL, values: values)
            let response = try await send(
                plan.template.method, url, ifChangedSince: loaded.pages == 0 ? validators : nil, context: context,
                accepting: plan.endpoint.single ? [404] : [])
            loaded.pages += 1
            var last = HTTPMetadata.info(from: response, answeredBy: name)
            // Past the first page the rules combine without validators: one page's validators
            // are not the whole listing's.
            if let freshness = last.freshness {
                loaded.freshness = loaded.freshness?.combined(with: freshness) ?? freshness
            }
            if loaded.pages > 1 {
                last.headers["etag"] = nil
                last.headers["last-modified"] = nil
            }
            loaded.last = last
            if response.status == 304 {
                loaded.notModified = true
                return loaded
            }
            if response.status == 404 { return loaded }
            loaded.document = loaded.pages == 1 ? (url, response) : nil
            let body = try json(response, from: url)
            let source = RemoteError.redacted(url)
            let records = try mapper.records(in: body, at: plan.endpoint.single ? nil : recordsPath, source: source)
            try map(records, entity: entity, recordsPath: recordsPath, source: source, into: &loaded, seen: &seen)
            switch plan.endpoint.paging {
            case .pages(let page, _, let size, _)?:
                // Count pages even while following links, so a page without a link goes on from
                // the right number (and never re-reads the linked page).
                values[page] = String((Int(values[page] ?? "") ?? 0) + 1)
                if let link = try LinkHeader.next(in: response[header: "link"]) {
                    nextURL = try resolve(link, against: url)
                } else if records.count < size {
                    return loaded
                } else {
                    nextURL = nil
                }
            case .offset(let offset, _, let size)?:
                guard records.count >= size else { return loaded }
                values[offset] = String((Int(values[offset] ?? "") ?? 0) + size)
            case .cursor(let variable, let next, _, _)?:
                guard let cursor = try nextCursor(in: body, at: next, source: source), !records.isEmpty else {
                    return loaded
                }
                values[variable] = cursor
            case .link?, nil:
                // An endpoint declared without paging still pages when it says so: a response
                // that announces a next page is never the whole answer.
                guard let link = try LinkHeader.next(in: response[header: "link"]) else { return loaded }
                if firstDocumentOnly {
                    loaded.announcesNextPage = true
                    return loaded
                }
                nextURL = try resolve(link, against: url)
            }
        }
    }

    /// Maps one page's records into `loaded`, once per object; bad records are skipped and
    /// counted when the options say so.
    func map(
        _ records: [JSONValue], entity: Entity, recordsPath: String?, source: String, into loaded: inout Loaded,
        seen: inout Set<ObjectID>
    ) throws(StoreChainError) {
        for (index, record) in records.enumerated() {
            do {
                let (node, embedded) = try mapper.node(
                    from: record, entity: entity, jsonPath: "$\(recordsPath.map { ".\($0)" } ?? "")[\(index)]",
                    source: source)
                if seen.insert(node.id).inserted { loaded.nodes.append(node) }
                loaded.embedded += embedded
            } catch {
                guard options.badRecords == .skip, error.code == .badRecord else { throw error }
                loaded.skipped += 1
            }
        }
    }

    /// The next page's cursor at `path` in a page's body: a string or an integer; missing, null
    /// or empty means the last page.
    ///
    /// - Throws: `.badRecord` naming the URL and JSON path when the cursor is another kind of value.
    func nextCursor(in body: JSONValue, at path: String, source: String) throws(StoreChainError) -> String? {
        switch JSONPath.value(at: path, in: body) {
        case nil, .null?: return nil
        case .string(let cursor)?: return cursor.isEmpty ? nil : cursor
        case .integer(let number)?: return String(number)
        case let other?:
            throw StoreChainError(
                .badRecord, "the next-page cursor is \(other.typeName), not a string or an integer",
                at: .init(file: source, path: "$.\(path)"),
                suggestion: "point the endpoint's cursor path at the field that holds the next cursor")
        }
    }

    /// Throws `too-many-pages` once `pages` pages of one listing have been read and
    /// another is announced: a listing is read whole or not at all, never cut short.
    func checkPageCount(_ pages: Int, of endpoint: String) throws(StoreChainError) {
        guard pages >= options.maxPages else { return }
        throw StoreChainError(
            .tooManyPages, "'\(endpoint)' has more than \(options.maxPages) pages",
            suggestion: "narrow the request, or raise the remote option max-pages")
    }

    /// A `Link` URL, which must stay on the backend's host (credentials go nowhere else).
    func resolve(_ link: String, against url: URL) throws(StoreChainError) -> URL {
        guard let next = URL(string: link, relativeTo: url)?.absoluteURL,
            next.host == options.baseURL.host, next.port == options.baseURL.port, next.scheme == options.baseURL.scheme
        else {
            throw StoreChainError(
                .badRecord, "the next-page link \(link) leads off the backend \(options.baseURL)",
                suggestion: "StoreChain follows page links on the backend's own host only")
        }
        return next
    }

    /// The relationship key paths a request needs loaded to be evaluated in memory: through its
    /// predicate, sort, chosen properties and prefetching.
    func neededKeyPaths(_ request: FetchRequest, entity: Entity) -> [[String]] {
        var paths: [[String]] = []
        func add(_ components: [String]) {
            var current = entity
            var relationships: [String] = []
            for (index, name) in components.enumerated() {
                guard let relationship = current.relationship(named: name),
                    let next = model.entity(named: relationship.destination)
                else { break }
                // `band.id`, where `id` is the band's key, needs only the foreign key the
                // record already carries, not the band.
                let rest = components.dropFirst(index + 1)
                if !relationship.isToMany, rest.count == 1, rest.first == next.key,
                    mapper.options(for: current.name).relationships[name].map({ mapping in
                        if case .endpoint = mapping { false } else { true }
                    }) == true
                {
                    break
                }
                relationships.append(name)
                current = next
            }
            if !relationships.isEmpty { paths.append(relationships) }
        }
        for components in request.predicate?.keyPaths ?? [] { add(components) }
        for descriptor in request.sortDescriptors { add(descriptor.keyPath.split(separator: ".").map(String.init)) }
        if case .dictionaries(let properties) = request.resultType {
            for property in properties { add(property.split(separator: ".").map(String.init)) }
        }
        for path in request.relationshipKeyPathsForPrefetching { add(path.split(separator: ".").map(String.init)) }
        return paths
    }

    /// Loads the relationships along `path` for `nodes` and the objects they lead to; an entity
    /// whose whole collection is in hand (`whole`) is read from it, with no request. `repeats`
    /// is how many times the fetch will make this read (once per page of its listing), so that
    /// reading a destination's whole listing once is weighed against the requests all of them
    /// would make.
    func follow(
        _ path: [String], from nodes: inout [Node], source: inout [ObjectID: Node], whole: [String: [Node]] = [:],
        repeats: Int = 1, context: RequestContext, serving parent: StoreRequest
    ) async throws {
        var level = nodes.map(\.id)
        var entityName = nodes.first?.id.entity ?? ""
        for name in path {
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
    func fetchNodes(
        _ entity: Entity, keys: [Value], repeats: Int = 1, context: RequestContext, serving parent: StoreRequest
    ) async throws -> [Node] {
        try await fetchWhere(
            entity, keyPath: [entity.key], equalsAnyOf: keys, repeats: repeats, context: context, serving: parent)
    }

    /// The objects of `entity` whose `keyPath` is one of `values`, the cheapest way: one fetch
    /// of the whole list (a batch endpoint, or the listing filtered in memory), one fetch per
    /// value when only an endpoint that takes one value can push it down, or the entity's whole
    /// listing when that costs fewer requests than the pushed-down reads would make over
    /// `repeats` calls (`listingEstimate`; the caches then hold the whole collection and answer
    /// the calls after it). Each fetch is a sub-request through the chain (so caches answer it),
    /// or, outside a chain, read here.
    func fetchWhere(
        _ entity: Entity, keyPath: [String], equalsAnyOf values: [Value], repeats: Int = 1, context: RequestContext,
        serving parent: StoreRequest
    ) async throws -> [Node] {
        guard !values.isEmpty else { return [] }
        let planner = try planner(for: entity.name)
        let list = FetchPredicate.comparison(Comparison(.keyPath(keyPath), .in, .array(values.map(Operand.constant))))
        let filter = try CompiledPredicate(list, entity: entity.name, model: model)
        let listPlan = try planner.plan(predicate: filter.predicate, sort: [])
        var predicates: [FetchPredicate?] = [filter.predicate]
        var plans = [listPlan]
        // The requests the endpoints' own choice is expected to make over every call.
        var expected = listPlan.pushed.isEmpty ? nil : repeats
        if listPlan.pushed.isEmpty,
            let single = try? planner.plan(
                predicate: .comparison(Comparison(.keyPath(keyPath), .equal, .constant(values[0]))), sort: []),
            !single.pushed.isEmpty
        {
            predicates = values.map { .comparison(Comparison(.keyPath(keyPath), .equal, .constant($0))) }
            plans = []
            for case let predicate? in predicates { plans.append(try planner.plan(predicate: predicate, sort: [])) }
            expected = values.count * repeats
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
                plans = [try planner.plan(predicate: nil, sort: [])]
            }
        }
        var found: [Node] = []
        var embedded: [Node] = []
        for (predicate, plan) in zip(predicates, plans) {
            var request = FetchRequest(entity: entity.name)
            request.predicate = predicate
            if let response = try await context.subrequest(.fetch(request), serving: parent) {
                guard case .objects(let nodes) = try response.fetchResult() else {
                    throw StoreChainError(
                        .invalidResponse, "\(response.info.answeredBy) answered \(request) without objects",
                        suggestion: "a handler answers a fetch of objects with objects")
                }
                found += nodes
                embedded += response.related
            } else {
                let loaded = try await load(plan, entity: entity, context: context)
                found += loaded.nodes
                embedded += loaded.embedded
            }
        }
        let source = Dictionary(embedded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return found.filter { filter.evaluate($0, in: source) }
    }

    /// The values of a relationship the records did not carry: from its own endpoint, or from
    /// the inverse foreign key on the destination.
    func relationshipValues(
        _ name: String, of owners: [ObjectID], entity: Entity, source: inout [ObjectID: Node], repeats: Int = 1,
        context: RequestContext, serving parent: StoreRequest
    ) async throws -> [ObjectID: RelationshipValue] {
        guard let relationship = entity.relationship(named: name),
            let destination = model.entity(named: relationship.destination)
        else { return [:] }
        var result: [ObjectID: RelationshipValue] = [:]
        if case .endpoint(let text)? = mapper.options(for: entity.name).relationships[name] {
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
                let keyPath = try destinationListing(of: relationship, destination: destination),
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
                // it; the fault itself (or a responder outside a chain) reads the endpoint.
                let fault = StoreRequest.relationshipFault(owner, relationship: name)
                if let response = try await context.subrequest(fault, serving: parent) {
                    result[owner] = try response.relationshipValue()
                    for node in response.related { source[node.id] = node }
                } else {
                    result[owner] = try await readList(
                        text, of: owner, relationship: relationship, source: &source, context: context, serving: fault)
                }
            }
            return result
        }
        guard let inverseName = relationship.inverse, let inverse = destination.relationship(named: inverseName),
            !inverse.isToMany
        else {
            let named = owners.prefix(3).map(\.description).joined(separator: ", ")
            throw StoreChainError(
                .noEndpoint,
                "cannot read '\(entity.name).\(name)' from the backend (needed for \(named)"
                    + (owners.count > 3 ? " and \(owners.count - 3) more)" : ")"),
                suggestion: "map it as a foreign key, an embedded record or its own endpoint")
        }
        let members = try await fetchWhere(
            destination, keyPath: [inverseName, entity.key], equalsAnyOf: owners.compactMap(\.key), repeats: repeats,
            context: context, serving: parent)
        return group(members, of: owners, through: relationship, source: &source)
    }

    /// The other way to read an endpoint relationship's lists: the destination's whole listing,
    /// grouped by the foreign key its records carry for the to-one inverse, which this returns.
    /// `nil` when the records carry no such key, or when the destination's endpoints would push
    /// the owners' keys down one at a time (as many requests as reading each owner's list).
    func destinationListing(of relationship: Relationship, destination: Entity) throws(StoreChainError) -> [String]? {
        guard let keyPath = inverseForeignKey(of: relationship, destination: destination),
            let planner = planners[destination.name]
        else { return nil }
        let key = Operand.constant(.integer(0))
        for byOwner in [Comparison(.keyPath(keyPath), .in, .array([key])), Comparison(.keyPath(keyPath), .equal, key)]
        where (try? planner.plan(predicate: .comparison(byOwner), sort: []))?.pushed.isEmpty == false {
            return nil
        }
        return keyPath
    }

    /// The key path of the owner's key on the destination (`album.id` for `Album.tracks`), when
    /// the destination's records carry the to-one inverse as a foreign key, so that its objects
    /// can be grouped by owner.
    func inverseForeignKey(of relationship: Relationship, destination: Entity) -> [String]? {
        guard let inverseName = relationship.inverse, let inverse = destination.relationship(named: inverseName),
            !inverse.isToMany, case .foreignKey? = mapper.options(for: destination.name).relationships[inverseName],
            let ownerEntity = model.entity(named: inverse.destination)
        else { return nil }
        return [inverseName, ownerEntity.key]
    }

    /// Each owner's value of `relationship`, from the destination objects whose to-one inverse
    /// names it.
    private func group(
        _ members: [Node], of owners: [ObjectID], through relationship: Relationship, source: inout [ObjectID: Node]
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
        of owners: [ObjectID], through relationship: Relationship, destination: Entity, context: RequestContext,
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
    func cachedMatches(_ request: FetchRequest, context: RequestContext, serving parent: StoreRequest) async throws
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
    func cachedAnswer(
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

    /// One owner's list from a relationship's own endpoint, every page of it (a to-many list is
    /// never cut at its first page), each page a request of its own
    /// (`StoreRequest.relationshipPage`) sent through the chain, so that retry, rate limiting and
    /// logging see every page; outside a chain the pages are read here.
    private func readList(
        _ text: String, of owner: ObjectID, relationship: Relationship, source: inout [ObjectID: Node],
        context: RequestContext, serving parent: StoreRequest
    ) async throws -> RelationshipValue? {
        var position = PageRequest.Position.record(0)
        var ids: [ObjectID] = []
        var seen: Set<ObjectID> = []
        var pages = 0
        while true {
            try checkPageCount(pages, of: text)
            pages += 1
            let page = StoreRequest.relationshipPage(owner, relationship: relationship.name, PageRequest(position))
            let response: StoreResponse
            if let answered = try await context.subrequest(page, serving: parent) {
                response = answered
            } else {
                response = try await respond(to: page, context: context)
            }
            for node in response.related { source[node.id] = node }
            for id in try response.relationshipValue().objectIDs where seen.insert(id).inserted { ids.append(id) }
            guard let next = response.info.page?.next else { break }
            position = next
        }
        return relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
    }
}
