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

    /// Answers one page of a fetch, which the chain's pager asks for (it narrowed the fetch
    /// first, once for all its pages), conditional by the page's validators. An endpoint that
    /// does not page answers the whole fetch with its one document; one declared without paging
    /// whose document announces a next page (`Link: rel="next"`) answers it as the first page of
    /// a `Link`-paged listing.
    func fetch(_ request: FetchRequest, page: PageRequest, context: RequestContext) async throws -> StoreResponse {
        let plan = try FetchPlan.planned(request, model: model)
        let queryPlan = try planners.planner(for: request.entity).plan(
            predicate: plan.predicate?.predicate, sort: request.sortDescriptors)
        if !queryPlan.endpoint.single {
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
        let loaded = try await listings.readDocument(
            queryPlan, entity: plan.entity, ifChangedSince: page.validators, context: context)
        if let (url, response) = loaded.document, loaded.announcesNextPage {
            // Declared without paging, but it pages: this is the first page of a `Link` listing.
            return try await answerPage(
                response, from: url, style: .link, paging: .link, start: 0, size: 0, request: request, plan: plan,
                queryPlan: queryPlan, context: context)
        }
        if queryPlan.pushed.isEmpty, !queryPlan.endpoint.single, !loaded.notModified, loaded.pages > 0 {
            let records = loaded.nodes.count + loaded.skipped
            context.services.listingSizes.learn(
                plan.entity.name, records: records, pageSize: max(1, (records + loaded.pages - 1) / loaded.pages))
        }
        var info = loaded.last ?? ResponseInfo(answeredBy: name, origin: .remote)
        info.exchanges = loaded.exchanges
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
        let paths = related.neededPaths(plan)
        for path in paths {
            try await related.follow(
                path, from: &nodes, source: &source, whole: collections, context: context, serving: .fetch(request))
        }
        try plan.requireLoaded(nodes, source: source)
        let result = plan.execute(over: nodes, source: source)
        var alongside: [Node] = []
        if case .objects(let objects) = result, !paths.isEmpty {
            // Every object the answer was computed over, so a handler above can check it again.
            alongside = source.nodes(along: paths.map(\.text), from: objects)
        }
        var known = Set(alongside.map(\.id))
        if case .objects(let objects) = result { known.formUnion(objects.map(\.id)) }
        for node in collections.values.joined() where known.insert(node.id).inserted {
            alongside.append(source[node.id] ?? node)
        }
        info.completeCollections = Set(collections.keys)
        return StoreResponse(.fetched(result), related: alongside, info: info)
    }
}
