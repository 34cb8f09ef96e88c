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
                    page, paging: paging, plan: plan, queryPlan: queryPlan, context: context)
            }
            if case .token = page.position {
                // A later page of a listing that announced it pages.
                return try await fetchPage(
                    page, paging: .link, plan: plan, queryPlan: queryPlan, context: context)
            }
        }
        let loaded = try await listings.readDocument(
            queryPlan, entity: plan.entity, ifChangedSince: page.validators, context: context)
        if let (url, response) = loaded.document, loaded.announcesNextPage {
            // Declared without paging, but it pages: this is the first page of a `Link` listing.
            return try answerPage(
                response, from: url, style: .link, paging: .link, start: 0, size: 0, plan: plan, queryPlan: queryPlan)
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
        // The records go up as the backend sent them, with the whole collections the document
        // held (for the pager to answer key paths into them, and the caches to keep): the pager
        // applies the request.
        let collections = completeCollections(fetched: plan.entity, plan: queryPlan, loaded: loaded)
        var related: [Node] = []
        var known = Set(loaded.nodes.map(\.id))
        for node in loaded.embedded + collections.values.joined() where known.insert(node.id).inserted {
            related.append(node)
        }
        info.completeCollections = Set(collections.keys)
        info.applied = .nothing
        return StoreResponse(.fetched(.objects(loaded.nodes)), related: related, info: info)
    }
}
