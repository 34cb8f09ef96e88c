import Foundation

extension CacheHandler {
    /// Forwards a save; when it succeeds, stores the saved objects (keeping the cached
    /// relationships the backend's answer does not mention), removes the deleted ones,
    /// forgets relationship lists the save may have changed on other objects, and drops cached
    /// queries and complete collections of every entity involved. (The chain publishes the
    /// save's change event.) A save an outbox acknowledged as pending stores its updates over
    /// the cached objects, so the app reads its own writes.
    func save(_ changes: SaveChanges, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let response = try await next(.save(changes), context)
        guard case .saved(let result) = response.result else { return response }
        let now = context.clock.now
        let before =
            await perform("read", context: context) {
                try await storage.nodes(changes.updated.map(\.id) + changes.deleted)
            } ?? [:]
        var write = CacheWrite()
        var touched = changes.entities.union(result.nodes.map(\.id.entity))
        for entity in touched.compactMap({ model.entity(named: $0) }) {
            touched.formUnion(entity.relationships.filter { $0.inverse != nil }.map(\.destination))
        }
        write.invalidated = touched
        write.removed = Set(result.deleted + changes.deleted)
        var nodes: [ObjectID: Node] = [:]
        for var node in result.nodes where !node.id.isTemporary {
            guard
                let freshness = freshness(
                    for: node.id.entity, response: response, now: now, validators: false)
            else { continue }
            // What the backend answered may not mention every relationship (a PATCH of an
            // album's title answers without its band): the cached ones it does not mention stay.
            if let cached = before[node.id] {
                node.relationships = cached.relationships.merging(node.relationships) { _, new in new }
            }
            node.freshness = freshness
            nodes[node.id] = node
        }
        // A save an outbox holds shows at once: pending updates over the objects as cached.
        for change in changes.updated where result.pending.contains(change.id) {
            guard var node = before[change.id] else { continue }
            node.apply(change)
            nodes[node.id] = node
        }
        // Objects on the other side of a changed relationship hold a list that may now be wrong.
        var stale: [ObjectID: Set<String>] = [:]
        for node in Array(before.values) + Array(nodes.values) {
            guard let entity = model.entity(named: node.id.entity) else { continue }
            for relationship in entity.relationships {
                guard let inverse = relationship.inverse else { continue }
                for target in node.relationships[relationship.name]?.objectIDs ?? [] {
                    stale[target, default: []].insert(inverse)
                }
            }
        }
        let targets = await perform("read", context: context) { try await storage.nodes(Array(stale.keys)) } ?? [:]
        for (id, var target) in targets where nodes[id] == nil && !write.removed.contains(id) {
            for name in stale[id] ?? [] { target.relationships[name] = nil }
            nodes[id] = target
        }
        write.nodes = Array(nodes.values)
        await store(write, context: context)
        return response
    }
}
