extension CacheHandler: CachingHandler {
    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? {
        storage.changesFromElsewhere()
    }

    /// Answers fetched before another process's change, heard of by this cache's own storage,
    /// are not stored over it (`SaveOrder`).
    public func heard(_ change: ChangeEvent) {
        saveOrder.end(begun: [], changed: changedEntities(change))
    }

    /// Updates in place the cached objects the change brings the new state of (when it carries
    /// records), removes the other objects it names (they are read again from below when asked
    /// for), edits the cached lists on the other side of what it moved, and drops the queries and
    /// complete collections of its entities; everything after a gap (changes made elsewhere that
    /// nobody could name); makes everything stale when the change says so.
    public func forget(_ change: ChangeEvent, context: RequestContext) async {
        var change = change
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
        // A record older than what a save of this process stored (told late) says nothing
        // reliable of the object or its relationships: it is changed, state unknown.
        change.nodes.removeAll { saveOrder.untold.mayBeOlder($0) }
        var write = CacheWrite()
        let inPlace = await updatedInPlace(change, context: context)
        let moved = change.inserted.union(change.updated).union(change.deleted).subtracting(inPlace.keys)
        let across = await otherSides(of: moved, change: change, context: context)
        write.nodes = Array(inPlace.merging(across.nodes) { changed, _ in changed }.values)
        write.removed = moved.union(across.unknown)
        write.invalidated = change.entities.union(across.entities)
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

    /// The cached objects on the other side of the relationships of `moved` (objects inserted,
    /// deleted or changed elsewhere and not updated in place), as the change leaves them: a
    /// band's list of albums without an album moved away or deleted, and without a fixed list
    /// where one may have joined it (an album inserted for it), so it is read again; a to-one
    /// that now points elsewhere or nowhere is known, or, where the change cannot tell, the
    /// object is forgotten (`unknown`). The change's records say where an object points now; an
    /// object changed without one may point anywhere, so that list is dropped from every cached
    /// object of its entity, as is one whose former place is not cached.
    private func otherSides(of moved: Set<ObjectID>, change: ChangeEvent, context: RequestContext) async
        -> (nodes: [ObjectID: Node], unknown: Set<ObjectID>, entities: Set<String>)
    {
        guard !moved.isEmpty else { return ([:], [], []) }
        let before = await perform("read", context: context) { try await storage.nodes(Array(moved)) } ?? [:]
        let records = Dictionary(
            change.nodes.filter { moved.contains($0.id) && !change.deleted.contains($0.id) }.map { ($0.id, $0) },
            uniquingKeysWith: { _, last in last })
        var across = relationshipsAcross(before: before, saved: records, deleted: change.deleted)
        var leaving: [ObjectID: [String]] = [:]
        // Relationships whose other side is not known now, by the entity of that side.
        var unrecorded: [String: Set<String>] = [:]
        for id in moved {
            guard let entity = model.entity(named: id.entity) else { continue }
            let related = entity.relationships.filter { $0.inverse != nil }
            if before[id] == nil { leaving[id] = related.filter { !$0.isToMany }.map(\.name) }
            guard records[id] == nil, !change.deleted.contains(id) else { continue }
            // Lists it may have joined (an album's band's albums). What its own lists hold is
            // told by the changes to their members, which own the relationship.
            for relationship in related where !relationship.isToMany {
                guard let inverse = relationship.inverse,
                    model.entity(named: relationship.destination)?.relationship(named: inverse)?.isToMany == true
                else { continue }
                unrecorded[relationship.destination, default: []].insert(inverse)
            }
        }
        await leaveFormerOwners(leaving, across: &across, context: context)
        var nodes: [ObjectID: Node] = [:]
        for (entity, names) in unrecorded {
            let cached = await perform("read", context: context) { try await storage.nodes(of: entity, matching: nil) }
            for var node in cached ?? [] where names.contains(where: { node.relationships[$0] != nil }) {
                for name in names { node.relationships[name] = nil }
                nodes[node.id] = node
            }
            across.changedEntities.insert(entity)
        }
        let targets = across.targets.subtracting(moved)
        let missing = targets.filter { nodes[$0] == nil }
        let cached = await perform("read", context: context) { try await storage.nodes(Array(missing)) } ?? [:]
        for id in targets {
            guard var target = nodes[id] ?? cached[id] else { continue }
            for name in across.lists[id] ?? [] { target.relationships[name] = nil }
            for (name, value) in across.toOnes[id] ?? [:] { target.relationships[name] = .toOne(value) }
            nodes[id] = target
        }
        return (nodes, across.unknown.subtracting(moved), across.changedEntities)
    }

    /// The entities `change` may have changed: all of the model's after a gap.
    private func changedEntities(_ change: ChangeEvent) -> Set<String> {
        change.isGap ? Set(model.entities.map(\.name)) : change.entities
    }
}
