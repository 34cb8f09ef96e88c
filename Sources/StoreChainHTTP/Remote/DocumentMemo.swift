import Foundation
import StoreChain

/// The GET responses of one request to the chain, so that loading related objects from the
/// document a fetch already read (a dump-only API's one big document) costs no second request.
/// The pages of one paged fetch share one memo (through `RequestScopeKey`).
final class DocumentMemo: Sendable {
    private let responses = Locked<[URL: TransportResponse]>([:])

    func response(for url: URL) -> TransportResponse? {
        responses.withLock { $0[url] }
    }

    func store(_ response: TransportResponse, for url: URL) {
        responses.withLock { $0[url] = response }
    }
}

extension RequestContext {
    /// The GET responses this request and its sub-requests already read (in its scope).
    var documentMemo: DocumentMemo? {
        self[RequestScopeKey.self]?.value(of: DocumentMemo.self) { DocumentMemo() }
    }
}

extension RemoteResponder {
    /// The whole collections this request read anyway, for the caches above: the fetched entity
    /// when its listing had no filter, and every
    /// entity whose unfiltered, unpaged listing is a document already read.
    func completeCollections(
        fetched entity: Entity, plan: QueryPlanner.Plan, loaded: Loaded, context: RequestContext
    ) -> [String: [Node]] {
        var collections: [String: [Node]] = [:]
        if plan.pushed.isEmpty, !plan.endpoint.single { collections[entity.name] = loaded.nodes }
        guard let memo = context.documentMemo else { return collections }
        for (name, entityOptions) in options.entities where collections[name] == nil {
            guard let other = model.entity(named: name) else { continue }
            for endpoint in entityOptions.fetch
            where endpoint.bind.isEmpty && endpoint.paging == nil && !endpoint.single {
                guard let template = try? RequestTemplate(endpoint.request), template.variables.isEmpty,
                    let url = try? template.url(base: options.baseURL, values: [:]),
                    let response = memo.response(for: url),
                    let nodes = try? mapAll(response, from: url, entity: other, records: endpoint.records)
                else { continue }
                collections[name] = nodes
                break
            }
        }
        return collections
    }

    /// Every record of `entity` in a response; throws on the first that does not map.
    private func mapAll(_ response: TransportResponse, from url: URL, entity: Entity, records: String?) throws
        -> [Node]
    {
        let source = RemoteError.redacted(url)
        let path = records ?? mapper.options(for: entity.name).records
        return try mapper.records(in: try json(response, from: url), at: path, source: source).enumerated().map {
            index, record in
            try mapper.node(from: record, entity: entity, jsonPath: "$[\(index)]", source: source).node
        }
    }
}
