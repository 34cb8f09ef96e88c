import Foundation
import StoreChain

extension RemoteResponder {
    /// The whole collections a fetch read: the fetched entity when its listing had no filter,
    /// and every entity whose unfiltered, unpaged listing is the very document it read (a
    /// dump-only API's one big document). Related objects are then found in them without a
    /// sub-request, and the caches above store them whole.
    func completeCollections(fetched entity: EntityDescription, plan: QueryPlanner.Plan, loaded: ListingReader.Listing)
        -> [String:
        [Node]]
    {
        var collections: [String: [Node]] = [:]
        if plan.pushed.isEmpty, !plan.endpoint.single { collections[entity.name] = loaded.nodes }
        guard let (url, response) = loaded.document else { return collections }
        for (name, entityOptions) in options.entities where collections[name] == nil {
            guard let other = model.entity(named: name) else { continue }
            for endpoint in entityOptions.fetch
            where endpoint.bind.isEmpty && endpoint.paging == nil && !endpoint.single {
                guard let template = try? RequestTemplate(endpoint.request), template.variables.isEmpty,
                    template.method == plan.template.method,
                    (try? template.url(base: options.baseURL, values: [:])) == url,
                    let nodes = try? mapAll(response, from: url, entity: other, records: endpoint.records)
                else { continue }
                collections[name] = nodes
                break
            }
        }
        return collections
    }

    /// Every record of `entity` in a response; throws on the first that does not map.
    private func mapAll(_ response: TransportResponse, from url: URL, entity: EntityDescription, records: String?)
        throws
        -> [Node]
    {
        let source = RemoteError.redacted(url)
        let path = records ?? mapper.options(for: entity.name).records
        return try mapper.records(in: try exchange.json(response, from: url), at: path, source: source).enumerated().map
        {
            index, record in
            try mapper.node(from: record, entity: entity, jsonPath: "$[\(index)]", source: source).node
        }
    }
}
