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
    /// made elsewhere that nobody could name).
    public func forget(_ change: ChangeEvent, context: RequestContext) async {
        if change.isGap {
            saveOrder.end(begun: [], changed: changedEntities(change))
            await perform("clear", context: context) { try await storage.clear() }
            return
        }
        var write = CacheWrite()
        write.removed = change.inserted.union(change.updated).union(change.deleted)
        write.invalidated = change.entities
        write.incomplete = change.entities
        // A save elsewhere, done: answers read before it are not stored after this.
        saveOrder.end(begun: [], changed: change.entities)
        await perform("write", context: context) { [write] in try await storage.write(write) }
    }

    /// The entities `change` may have changed: all of the model's after a gap.
    private func changedEntities(_ change: ChangeEvent) -> Set<String> {
        change.isGap ? Set(model.entities.map(\.name)) : change.entities
    }
}
