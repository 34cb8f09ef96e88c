import Foundation
@_spi(Internals) import StoreChain

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
                last.http?.headers["etag"] = nil
                last.http?.headers["last-modified"] = nil
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
}
