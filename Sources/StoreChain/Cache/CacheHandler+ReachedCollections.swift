import Foundation

extension CacheHandler {
    /// Answers a fetch whose own entity's whole collection is cached and fresh but whose
    /// predicate or sort reach entities whose collections are not (`Track where album.title
    /// BEGINSWITH "D"` with every track cached): those collections are loaded whole as
    /// sub-requests through the chain, which the caches or the backend's listings answer and
    /// the caches then keep whole, and the fetch is answered here. Forwarding it instead would
    /// read the fetched entity's listing again, page by page.
    ///
    /// - Returns: `nil` when this does not apply (the fetched entity's collection is not held
    ///   and fresh, a sub-request is not possible or the caches alone may answer it and
    ///   cannot), or when the collections cannot answer after all.
    func answerLoadingReachedCollections(_ cachePlan: CachePlan, context: RequestContext) async throws
        -> StoreResponse?
    {
        let entity = cachePlan.fetch.entity.name
        let entities = cachePlan.reachedEntities
        guard entities.count > 1,
            let own = await perform("read", context: context, { try await storage.collection(entity) }) ?? nil,
            own.isFresh(at: context.clock.now),
            var nodes = await perform("read", context: context, { try await storage.nodes(of: entity, matching: nil) })
        else { return nil }
        let parent = StoreRequest.fetch(cachePlan.fetch.request)
        for other in entities where other != entity {
            if let held = await perform("read", context: context, { try await storage.collection(other) }) ?? nil,
                held.isFresh(at: context.clock.now),
                let members = await perform(
                    "read", context: context, { try await storage.nodes(of: other, matching: nil) })
            {
                nodes += members
                continue
            }
            let response: StoreResponse?
            do {
                response = try await context.subrequest(.fetch(FetchRequest(entity: other)), serving: parent)
            } catch let error as StoreChainError where error.code == .notCached {
                return nil
            }
            guard let response, case .objects(let members) = try response.fetchResult() else { return nil }
            nodes += members
        }
        guard
            let answer = try await collectionAnswer(
                cachePlan, fromWhole: nodes, of: entities, freshness: own, named: entity)
        else { return nil }
        return self.answer(answer, status: .hit)
    }
}
