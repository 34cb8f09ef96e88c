/// What a save did to the objects a cache holds, for editing its cached windows in place
/// (`WindowEdit`) instead of dropping them.
struct SaveEffect: Sendable {
    /// The changed objects' states after the save (a deleted object has none).
    var after: [ObjectID: Node] = [:]
    /// Their states as cached before it, where known.
    var before: [ObjectID: Node] = [:]
    /// Changed objects that had no state before the save (inserted by it).
    var new: Set<ObjectID> = []
    /// Changed objects whose state after the save is not known (not cached, or a relationship
    /// that now points somewhere the cache cannot tell).
    var unknown: Set<ObjectID> = []
    /// Objects the save deleted, and temporary IDs it replaced by permanent ones.
    var removed: Set<ObjectID> = []
    /// The properties the save changed of the objects it updated, as far as its changes tell
    /// (the attributes and relationships an update sets, the lists and to-ones it changes on
    /// the other side), for objects whose states before and after are not both known.
    var changedProperties: [ObjectID: Set<String>] = [:]

    /// Whether the save may have changed any of `properties` of `id` (an object inserted or
    /// deleted changed them all; one whose changes are not known, too).
    func mayHaveChanged(_ properties: Set<String>, of id: ObjectID) -> Bool {
        if removed.contains(id) || new.contains(id) { return true }
        var changed = changedProperties[id]
        if let before = before[id], let after = after[id] {
            // Both states known: what differs, exactly, and what the save changed that is not
            // known after it (a band's `albums` dropped by an album saved for it: unknown before
            // and after, yet changed).
            var differences = (changed ?? []).filter {
                after.attributes.dictionary[$0] == nil && after.relationships[$0] == nil
            }
            for name in Set(before.attributes.dictionary.keys).union(after.attributes.dictionary.keys)
            where before.attributes.dictionary[name] != after.attributes.dictionary[name] {
                differences.insert(name)
            }
            for name in Set(before.relationships.keys).union(after.relationships.keys)
            where before.relationships[name] != after.relationships[name] {
                differences.insert(name)
            }
            changed = differences
        }
        guard let changed else { return true }
        return !changed.isDisjoint(with: properties)
    }

    /// Every object the save changed.
    var changed: Set<ObjectID> { Set(after.keys).union(unknown).union(removed) }
}

/// A cached window (or count) as a save leaves it, decided from the cached objects alone; `nil`
/// when it cannot be decided, and the window is then dropped (read again when asked for).
///
/// Exact or nothing: the edited window holds what the backend would answer once it has the
/// save (the order among objects that tie on every sort key aside, which no backend fixes).
/// An object the save changed joins or leaves by its new state; an offset window, or a full one
/// an object would leave or join at its end, is kept only where the save changes nothing in it.
struct WindowEdit {
    let query: CachedQuery
    /// The plan of the whole query (no offset or limit), for its predicate and order.
    let plan: FetchPlan
    /// The key paths its predicate and order read.
    let keyPaths: [[String]]
    let model: ObjectModel
    /// The properties those key paths read, by entity (`band.country` reads Album's `band` and
    /// Band's `country`; `tracks.@count` reads Album's `tracks` and Track's `album`).
    let reads: [String: Set<String>]

    init(query: CachedQuery, plan: FetchPlan, model: ObjectModel) {
        self.query = query
        self.plan = plan
        self.model = model
        keyPaths =
            (plan.request.predicate?.keyPaths ?? [])
            + plan.request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
        var reads: [String: Set<String>] = [:]
        for path in keyPaths {
            var entity = plan.entity
            for name in path {
                reads[entity.name, default: []].insert(name)
                guard let relationship = entity.relationship(named: name),
                    let destination = model.entity(named: relationship.destination)
                else { break }
                // What a to-many holds is its destinations' inverse: a track moved to another
                // album changes `tracks.@count` of an album the cache may not hold.
                if relationship.isToMany, let inverse = relationship.inverse {
                    reads[destination.name, default: []].insert(inverse)
                }
                entity = destination
            }
        }
        self.reads = reads
    }

    /// Whether the save changed something the window reads of an object of another entity (a
    /// band's country, for albums by their band's country; not its name): which of the
    /// window's objects that moves the cache cannot tell. One whose state before or after is
    /// not known counts as changed; one inserted or deleted does not (the objects of the
    /// window's entity that it joins or leaves are changed themselves, or not known).
    private func readsChange(elsewhere effect: SaveEffect, entity: String) -> Bool {
        effect.changed.contains { id in
            id.entity != entity && query.reads.contains(id.entity) && !effect.removed.contains(id)
                && !effect.new.contains(id) && effect.mayHaveChanged(reads[id.entity] ?? [], of: id)
        }
    }

    /// Whether its predicate or order reads objects of its own entity through a relationship
    /// (a manager's name): then a change to one object moves others.
    private var readsOwnEntityThroughRelationships: Bool {
        model.entities(along: keyPaths, from: query.request.entity).contains(query.request.entity)
    }

    /// The window as `effect` leaves it; `source` holds the cached objects (in their state after
    /// the save) that evaluating the window needs.
    func applying(_ effect: SaveEffect, source: [ObjectID: Node]) -> CachedQuery? {
        let entity = query.request.entity
        // Objects of its entity whose changes leave what it reads of them (their membership and
        // place) as it was are not changed for it: a year, for albums by their band's name.
        let changedHere = effect.changed.filter {
            $0.entity == entity && effect.mayHaveChanged(reads[entity] ?? [], of: $0)
        }
        guard !readsChange(elsewhere: effect, entity: entity) else { return nil }
        guard !changedHere.isEmpty else { return query }
        guard !readsOwnEntityThroughRelationships, effect.unknown.isDisjoint(with: changedHere) else { return nil }
        let afterStates = changedHere.compactMap { effect.after[$0] }
        guard afterStates.allSatisfy({ isKnown($0, source) }) else { return nil }
        if let count = query.count { return counted(count, effect: effect, changed: changedHere, source: source) }
        if query.request.fetchOffset > 0 {
            // What comes before the window is not cached: kept only if the save changes no match.
            for id in changedHere {
                guard !query.ids.contains(id), !(effect.after[id].map { matches($0, source) } ?? false),
                    matchedBefore(id, effect: effect, source: source) == false
                else { return nil }
            }
            return query
        }
        var members: [Node] = []
        for id in query.ids where !changedHere.contains(id) {
            guard let node = source.node(for: id) else { return nil }
            members.append(node)
        }
        guard members.allSatisfy({ isKnown($0, source) }) else { return nil }
        let matched = plan.select(from: members + afterStates, source: source)
        var edited = query
        edited.freshness.validators = Validators()  // they describe the window before the edit
        if query.reachesEnd {
            // Every match was in the window: the changed objects' new states are all it needs.
            let limit = query.request.fetchLimit ?? .max
            edited.ids = matched.prefix(limit).map(\.id)
            edited.reachesEnd = matched.count < limit
            return edited
        }
        // A full window: objects after its last one are not cached. A changed object is placed
        // only before the last one; one that would tie with it or come after it is not known
        // to be in the window, and one leaving makes room for an object the cache does not know.
        guard let last = query.ids.last, let limit = query.request.fetchLimit,
            let boundary = effect.before[last] ?? source.node(for: last), isKnown(boundary, source)
        else { return nil }
        var kept: [ObjectID] = []
        for node in matched {
            guard changedHere.contains(node.id) else {
                kept.append(node.id)
                continue
            }
            let order = compare(node, boundary, source)
            if order == 0 { return nil }
            if order < 0 { kept.append(node.id) }
        }
        guard kept.count >= limit else { return nil }
        edited.ids = Array(kept.prefix(limit))
        return edited
    }

    /// A stored count, moved by each changed object that matches now but did not, or did and
    /// no longer does.
    private func counted(_ count: Int, effect: SaveEffect, changed: Set<ObjectID>, source: some NodeSource)
        -> CachedQuery?
    {
        var total = count
        for id in changed {
            guard let before = matchedBefore(id, effect: effect, source: source) else { return nil }
            let now = effect.after[id].map { matches($0, source) } ?? false
            total += (now ? 1 : 0) - (before ? 1 : 0)
        }
        var edited = query
        edited.count = max(0, total)
        edited.freshness.validators = Validators()
        return edited
    }

    /// Whether `id` matched before the save; `nil` when its state then is not known.
    private func matchedBefore(_ id: ObjectID, effect: SaveEffect, source: some NodeSource) -> Bool? {
        if let before = effect.before[id] {
            guard isKnown(before, source) else { return nil }
            return matches(before, source)
        }
        return effect.new.contains(id) ? false : nil
    }

    /// Whether everything the predicate and order read from `node` is known: each relationship
    /// along their key paths has a value, and the objects it leads to are in `source` (a
    /// relationship never read would count as empty, and `tracks.@count < 4` would hold).
    private func isKnown(_ node: Node, _ source: some NodeSource) -> Bool {
        for path in keyPaths {
            var level = [node]
            var entity = plan.entity
            for (index, name) in path.enumerated() {
                guard let relationship = entity.relationship(named: name),
                    let destination = model.entity(named: relationship.destination)
                else { break }
                // The objects are read only for what follows: `band.name`, not `tracks.@count`
                // or `band.id` (the key the relationship holds).
                let readsObjects =
                    index + 1 < path.count
                    && !ResolvedKeyPath.readsOnlyTheKey(
                        through: relationship, to: destination, then: path[(index + 1)...])
                var next: [Node] = []
                for current in level {
                    guard let value = current.relationships[name] else { return false }
                    guard readsObjects else { continue }
                    for id in value.objectIDs {
                        guard let found = source.node(for: id) else { return false }
                        next.append(found)
                    }
                }
                entity = destination
                level = next
            }
        }
        return true
    }

    private func matches(_ node: Node, _ source: some NodeSource) -> Bool {
        plan.predicate?.evaluate(node, in: source) ?? true
    }

    /// How `node` sorts against `other` by the sort descriptors alone: negative before, 0 tied.
    private func compare(_ node: Node, _ other: Node, _ source: some NodeSource) -> Int {
        let values = plan.sortValues(of: node, source: source)
        let others = plan.sortValues(of: other, source: source)
        for (index, descriptor) in plan.request.sortDescriptors.enumerated() {
            let order = Value.sortCompare(values[index], others[index])
            if order != 0 { return descriptor.ascending ? order : -order }
        }
        return 0
    }
}
