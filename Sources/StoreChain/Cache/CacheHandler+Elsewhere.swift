extension CacheHandler: CachingHandler {
    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? {
        storage.changesFromElsewhere()
    }

    /// Answers fetched before another process's change, heard of by this cache's own storage,
    /// are not stored over it (`SaveOrder`).
    public func heard(_ change: ChangeEvent) {
        saveOrder.end(begun: [], changed: changedEntities(change))
    }

    /// Removes the objects the change names (they are read again from below when asked for) and
    /// the queries and complete collections of its entities; everything after a gap (changes
    /// made elsewhere that nobody could name); makes everything stale when the change says so.
    public func forget(_ change: ChangeEvent, context: RequestContext) async {
        if change.isGap {
            saveOrder.end(begun: [], changed: changedEntities(change))
            await perform("clear", context: context) { try await storage.clear() }
            return
        }
        if change.marksStale {
            let now = context.clock.now
            await perform("expire", context: context) { try await storage.expire(at: now) }
            return
        }
        var write = CacheWrite()
        let inPlace = await updatedInPlace(change, context: context)
        write.nodes = Array(inPlace.values)
        write.removed = change.inserted.union(change.updated).union(change.deleted).subtracting(inPlace.keys)
        write.invalidated = change.entities
        // Entities changed in ways not applied in place: their complete collections may lack it.
        write.incomplete = change.invalidatedEntities.union(write.removed.map(\.entity))
        // A save elsewhere, done: answers read before it are not stored after this.
        saveOrder.end(begun: [], changed: change.entities)
        await perform("write", context: context) { [write] in try await storage.write(write) }
    }

    /// The cached objects an update that brings the object's new state changes in place: each
    /// takes the state's attributes and version and keeps its freshness and relationships (the
    /// state must give the same to-one relationships, or none), so the complete collections that
    /// hold it stay complete. An object not cached, or whose relationships the change moves, is
    /// forgotten instead.
    private func updatedInPlace(_ change: ChangeEvent, context: RequestContext) async -> [ObjectID: Node] {
        let states = change.nodes.filter { change.updated.contains($0.id) && !change.deleted.contains($0.id) }
        guard !states.isEmpty else { return [:] }
        let cached = await perform("read", context: context) { try await storage.nodes(states.map(\.id)) } ?? [:]
        var updated: [ObjectID: Node] = [:]
        for state in states {
            guard var node = cached[state.id], node.freshness != nil,
                state.relationships.allSatisfy({ node.relationships[$0.key] == $0.value })
            else { continue }
            node.attributes = state.attributes
            // The version the next update is based on (a stale one would be refused as a conflict).
            node.version = state.version ?? node.version
            updated[state.id] = node
        }
        return updated
    }

    /// The entities `change` may have changed: all of the model's after a gap.
    private func changedEntities(_ change: ChangeEvent) -> Set<String> {
        change.isGap ? Set(model.entities.map(\.name)) : change.entities
    }
}
