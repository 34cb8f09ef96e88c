import Foundation

extension CacheHandler {
    /// Forwards a save; when it succeeds, stores the saved objects (keeping what the cached
    /// object and the save give for what the backend's answer does not mention), removes the
    /// deleted ones, brings the other side of every relationship it changed up to date, edits
    /// the cached queries that read an entity it changed where the cached objects decide them
    /// and drops the others (`WindowEdit`), and keeps complete collections complete where it
    /// knows all it changed in them. (The chain publishes the save's change event.) A save an
    /// outbox acknowledged as pending stores its updates over the cached objects, and its
    /// inserts where the storage keeps temporary IDs, so the app reads its own writes. Answers
    /// read below while the save was on its way are not stored after it (`SaveOrder`).
    func save(_ changes: SaveChanges, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let touched = entitiesTouched(by: changes)
        saveOrder.begin(touched)
        // Windows are edited from what is cached now: not stored over another save or change since.
        let editedSince = saveOrder.mark()
        var changed: Set<String> = []
        defer { saveOrder.end(begun: touched, changed: changed) }
        let response = try await next(.save(changes), context)
        guard case .saved(let result) = response.result else { return response }
        let now = context.clock.now
        let before =
            await perform("read", context: context) {
                try await storage.nodes(changes.updated.map(\.id) + changes.deleted)
            } ?? [:]
        var write = CacheWrite()
        write.removed = Set(result.deleted + changes.deleted)
        var nodes: [ObjectID: Node] = [:]
        // The relationships each saved object's answer (or pending change) gives.
        var given: [ObjectID: Set<String>] = [:]
        // What the save sent, under the IDs its objects are stored by.
        var sent: [ObjectID: Node] = [:]
        for node in changes.inserted {
            sent[result.permanentIDs[node.id] ?? node.id] = node.remapping(result.permanentIDs)
        }
        for node in changes.updated { sent[node.id] = node }
        for var node in result.nodes where !node.id.isTemporary {
            guard
                let freshness = freshness(
                    for: node.id.entity, response: response, now: now, validators: false)
            else { continue }
            given[node.id] = Set(node.relationships.keys)
            // What the backend answered may not mention every value (a PATCH of an album's title
            // may answer without its band): the cached object with the save's changes gives them.
            var known = before[node.id] ?? Node(id: node.id)
            if let change = sent[node.id] { known.apply(change) }
            known.apply(node)
            node.attributes = known.attributes
            node.relationships = known.relationships
            node.freshness = freshness
            nodes[node.id] = node
        }
        // A save an outbox holds shows at once: pending updates over the objects as cached. One
        // not cached is not stored (its other values are not known), but the lists it joins
        // and leaves change all the same.
        var moved: [ObjectID: Node] = [:]
        for change in changes.updated where result.pending.contains(change.id) {
            guard var node = before[change.id] else {
                moved[change.id] = Node(id: change.id, relationships: change.relationships)
                continue
            }
            node.apply(change)
            given[node.id] = Set(change.relationships.keys)
            nodes[node.id] = node
        }
        var across = relationshipsAcross(
            before: before, saved: nodes.merging(moved) { stored, _ in stored }, deleted: write.removed)
        var leaving: [ObjectID: [String]] = [:]
        for change in changes.updated where before[change.id] == nil {
            leaving[change.id] = Array(change.relationships.keys)
        }
        for id in changes.deleted where before[id] == nil {
            leaving[id] = model.entity(named: id.entity)?.relationships.map(\.name) ?? []
        }
        await leaveFormerOwners(leaving, across: &across, context: context)
        write.invalidated = touched.union(result.nodes.map(\.id.entity)).union(across.changedEntities)
        for id in result.deleted { write.invalidated.formUnion(otherSides(of: id.entity, relationships: nil)) }
        write.incomplete = entitiesLeftIncomplete(stored: nodes, sent: sent, deleted: write.removed, across: across)
        let unsaved = across.targets.filter { nodes[$0] == nil && !write.removed.contains($0) }
        let targets = await perform("read", context: context) { try await storage.nodes(Array(unsaved)) } ?? [:]
        for id in across.targets where !write.removed.contains(id) {
            // A saved object takes the change too, for the relationships its answer did not give
            // (an album inserted for a band saved in the same request: the band's cached list).
            guard var target = nodes[id] ?? targets[id] else { continue }
            let answered = nodes[id] == nil ? [] : given[id] ?? []
            for name in across.lists[id] ?? [] where !answered.contains(name) { target.relationships[name] = nil }
            for (name, value) in across.toOnes[id] ?? [:] where !answered.contains(name) {
                target.relationships[name] = .toOne(value)
            }
            nodes[id] = target
        }
        await showPendingInserts(changes, result: result, in: &nodes, context: context)
        let held = heldInserts(changes, result: result, response: response, now: now)
        // Inserts the outbox held, now sent: their objects under temporary IDs give way.
        let replaced = changes.inserted.map(\.id).filter { $0.isTemporary && result.permanentIDs[$0] != nil }
        // The cached states of the other objects the answer gives (a band saved with its
        // albums) and of the held inserts it replaces, to tell what the save changed of them.
        let answered = result.nodes.map(\.id).filter { !$0.isTemporary && before[$0] == nil && targets[$0] == nil }
        let lookedUp = answered + (storage.keepsTemporaryObjects ? replaced : [])
        let answeredBefore =
            lookedUp.isEmpty
            ? [:] : await perform("read", context: context) { try await storage.nodes(lookedUp) } ?? [:]
        var effect = SaveEffect(
            after: nodes.merging(held) { saved, _ in saved },
            before: before.merging(targets) { cached, _ in cached }.merging(answeredBefore) { cached, _ in cached },
            new: newObjects(changes, result: result),
            removed: write.removed.union(replaced))
        effect.changedProperties = propertiesChanged(by: changes, across: across, before: effect.before)
        effect.unknown = objectsNamed(by: changes, result: result, across: across).subtracting(effect.after.keys)
            .subtracting(effect.removed)
        if !held.isEmpty {
            // Stored, so the windows they join can answer (and complete collections stay so).
            write.incomplete = entitiesLeftIncomplete(
                stored: effect.after, sent: sent, deleted: write.removed, across: across)
        }
        write.removed = effect.removed
        write.nodes = Array(effect.after.values)
        write.editedQueries = await windowsEdited(by: effect, reading: write.invalidated, context: context)
        if !write.editedQueries.isEmpty {
            let (order, reads) = (saveOrder, write.editedQueries.reduce(into: Set<String>()) { $0.formUnion($1.reads) })
            write.editCondition = { order.isUnchanged(reads, since: editedSince, besidesSaveOf: touched) }
        }
        changed = write.entities.union(write.invalidated)
        await store(write, context: context)
        saveOrder.untold.stored(
            Dictionary(result.nodes.filter { nodes[$0.id] != nil }.map { ($0.id, $0.version) }) { _, last in last })
        let unknown = across.unknown.filter { nodes[$0] == nil && !write.removed.contains($0) }
        if !unknown.isEmpty {
            await perform("forget", context: context) {
                for id in unknown { try await storage.refresh(.node(id), freshness: Self.unusable) }
            }
        }
        return response
    }

    /// The objects inserted by a save an outbox holds, under their temporary IDs, when the
    /// storage keeps such objects: so the cached windows they join show them until the outbox
    /// sends the save (whose answer replaces them by the backend's objects) or the backend
    /// refuses it (and the caches forget them).
    private func heldInserts(_ changes: SaveChanges, result: SaveResult, response: StoreResponse, now: Date)
        -> [ObjectID: Node]
    {
        guard storage.keepsTemporaryObjects else { return [:] }
        var held: [ObjectID: Node] = [:]
        for var node in changes.inserted where node.id.isTemporary && result.pending.contains(node.id) {
            guard let freshness = freshness(for: node.id.entity, response: response, now: now, validators: false)
            else { continue }
            node.freshness = freshness
            held[node.id] = node
        }
        return held
    }

    /// The objects a save makes that were not there before: its inserts, under the IDs they
    /// are stored by (temporary while an outbox holds them).
    private func newObjects(_ changes: SaveChanges, result: SaveResult) -> Set<ObjectID> {
        Set(changes.inserted.map { result.permanentIDs[$0.id] ?? $0.id })
    }

    /// The properties a save changes of the objects it updates, and of those on the other side of
    /// the relationships it changes (their inverse lists and to-ones).
    /// A to-one set on the other side is a change unless the list it is the inverse of held the
    /// object before (a band saved with its albums does not move them).
    private func propertiesChanged(
        by changes: SaveChanges, across: RelationshipsAcross, before: [ObjectID: Node]
    ) -> [ObjectID: Set<String>] {
        var changed: [ObjectID: Set<String>] = [:]
        for node in changes.updated {
            changed[node.id, default: []].formUnion(node.attributes.dictionary.keys)
            changed[node.id, default: []].formUnion(node.relationships.keys)
        }
        for (id, lists) in across.lists { changed[id, default: []].formUnion(lists) }
        for (id, toOnes) in across.toOnes {
            for (name, owner) in toOnes {
                let inverse = model.entity(named: id.entity)?.relationship(named: name)?.inverse
                if let owner, let inverse, before[owner]?.relationships[inverse]?.objectIDs.contains(id) == true {
                    changed[id, default: []].formUnion([])
                    continue
                }
                changed[id, default: []].insert(name)
            }
        }
        return changed
    }

    /// Every object a save or its answer names, or changes on the other side of a relationship.
    private func objectsNamed(by changes: SaveChanges, result: SaveResult, across: RelationshipsAcross) -> Set<ObjectID>
    {
        var named = newObjects(changes, result: result)
        named.formUnion(changes.updated.map(\.id))
        named.formUnion(changes.deleted)
        named.formUnion(result.nodes.map(\.id))
        named.formUnion(result.deleted)
        named.formUnion(across.targets)
        named.formUnion(across.unknown)
        return named
    }

    /// Objects a save the outbox holds inserts keep their temporary IDs, and the cached lists
    /// they join show them (read your writes: another context that reads
    /// `album.tracks` with the backend down sees the new track; the outbox answers for the
    /// object itself). Once the save is sent, its answer drops those lists, to be read again.
    private func showPendingInserts(
        _ changes: SaveChanges, result: SaveResult, in nodes: inout [ObjectID: Node], context: RequestContext
    ) async {
        var joining: [ObjectID: [String: [ObjectID]]] = [:]
        for node in changes.inserted where result.pending.contains(node.id) {
            for (owner, list) in model.listsJoined(by: node) {
                joining[owner, default: [:]][list, default: []].append(node.id)
            }
        }
        guard !joining.isEmpty else { return }
        let missing = joining.keys.filter { nodes[$0] == nil }
        let cached = await perform("read", context: context) { try await storage.nodes(missing) } ?? [:]
        for (id, lists) in joining {
            guard var target = nodes[id] ?? cached[id] else { continue }
            var changed = false
            for (name, members) in lists {
                guard case .toMany(let list)? = target.relationships[name] else { continue }
                target.relationships[name] = .toMany(list + members.filter { !list.contains($0) })
                changed = true
            }
            if changed { nodes[id] = target }
        }
    }

    /// An object the cache did not hold that a save moved (by a to-one whose inverse is a list)
    /// or deleted left a list the cache may hold (a track moved to another album, or deleted,
    /// leaves its old album's `tracks`), and the cache does not know which: the cached objects of
    /// the list's entity are searched for it, and those holding it take the change
    /// (`RelationshipsAcross.lists`). `leaving` names each such object's relationships the save
    /// changed. A scan of that entity's cached objects, which only such saves make.
    func leaveFormerOwners(
        _ leaving: [ObjectID: [String]], across: inout RelationshipsAcross, context: RequestContext
    ) async {
        var members: [String: [(member: ObjectID, list: String)]] = [:]
        for (id, names) in leaving {
            guard let entity = model.entity(named: id.entity) else { continue }
            for name in names {
                guard let relationship = entity.relationship(named: name), !relationship.isToMany,
                    let inverse = relationship.inverse,
                    model.entity(named: relationship.destination)?.relationship(named: inverse)?.isToMany == true
                else { continue }
                members[relationship.destination, default: []].append((id, inverse))
            }
        }
        for (entity, members) in members {
            let owners = await perform("read", context: context) { try await storage.nodes(of: entity, matching: nil) }
            for owner in owners ?? [] {
                for (member, list) in members where owner.relationships[list]?.objectIDs.contains(member) == true {
                    across.lists[owner.id, default: []].insert(list)
                    across.changedEntities.insert(entity)
                }
            }
        }
    }

    /// The entities a save changes objects of, as far as its changes tell: those it saves, and
    /// those on the other side of every relationship (with an inverse) it sets or that an object
    /// it deletes holds. With what its answer adds (the entities of the objects it answers or
    /// deletes, and `RelationshipsAcross.changedEntities`), the cached queries that read any of
    /// them are dropped; the others stay (a renamed band leaves the windows of albums by year).
    private func entitiesTouched(by changes: SaveChanges) -> Set<String> {
        var touched = changes.entities
        for node in changes.inserted + changes.updated {
            touched.formUnion(otherSides(of: node.id.entity, relationships: Array(node.relationships.keys)))
        }
        for id in changes.deleted { touched.formUnion(otherSides(of: id.entity, relationships: nil)) }
        return touched
    }

    /// The destinations of `entityName`'s relationships with an inverse (of those `names`, when given).
    private func otherSides(of entityName: String, relationships names: [String]?) -> Set<String> {
        guard let entity = model.entity(named: entityName) else { return [] }
        return Set(
            entity.relationships.filter { $0.inverse != nil && (names?.contains($0.name) ?? true) }.map(\.destination))
    }

    /// The entities whose complete collections the save leaves incomplete as cached: those of a
    /// saved object not stored (an insert an outbox holds under a temporary ID, an answer not to
    /// be stored), of an object whose to-one is no longer known, and on the other side of a
    /// deleted object's relationships (a backend may delete or change what held it). The others
    /// stay complete: their saved objects are stored, their deleted ones removed.
    private func entitiesLeftIncomplete(
        stored: [ObjectID: Node], sent: [ObjectID: Node], deleted: Set<ObjectID>, across: RelationshipsAcross
    ) -> Set<String> {
        var incomplete = Set(across.unknown.map(\.entity))
        for id in sent.keys where stored[id] == nil { incomplete.insert(id.entity) }
        for entity in Set(deleted.map(\.entity)).compactMap({ model.entity(named: $0) }) {
            incomplete.formUnion(entity.relationships.filter { $0.inverse != nil }.map(\.destination))
        }
        return incomplete
    }

    /// What a save changed on the other side of the relationships it changed. A to-many list
    /// there may now be wrong: it is dropped (and read again when asked for). A to-one there is
    /// known: the saved object, when its relationship now holds the target; none, when the saved
    /// object was deleted. When a saved object let a target go (a band's list without an
    /// album), where the target's to-one points now is not known: the target must be read again.
    /// Relationships the save did not change are left alone (a band renamed keeps its albums'
    /// `band`; dropping it left albums no fetch over `band.…` could use).
    func relationshipsAcross(before: [ObjectID: Node], saved: [ObjectID: Node], deleted: Set<ObjectID>)
        -> RelationshipsAcross
    {
        var across = RelationshipsAcross()
        for id in Set(before.keys).union(saved.keys) {
            guard let entity = model.entity(named: id.entity) else { continue }
            let isDeleted = deleted.contains(id)
            for relationship in entity.relationships {
                guard let inverseName = relationship.inverse,
                    let inverse = model.entity(named: relationship.destination)?.relationship(named: inverseName)
                else { continue }
                let cached = before[id]?.relationships[relationship.name]
                let was = Set(cached?.objectIDs ?? [])
                let now = isDeleted ? [] : Set(saved[id]?.relationships[relationship.name]?.objectIDs ?? [])
                if cached != nil, was != now { across.changedEntities.insert(relationship.destination) }
                for target in was.symmetricDifference(now) {
                    if inverse.isToMany {
                        across.lists[target, default: []].insert(inverseName)
                    } else if now.contains(target) {
                        across.toOnes[target, default: [:]][inverseName] = .some(id)
                    } else if isDeleted {
                        across.toOnes[target, default: [:]][inverseName] = .some(nil)
                    } else {
                        across.unknown.insert(target)
                    }
                }
            }
        }
        return across
    }
}

/// Changes a save makes to cached objects it did not send (`relationshipsAcross`).
struct RelationshipsAcross {
    /// To-many lists that may be wrong now, by object.
    var lists: [ObjectID: Set<String>] = [:]
    /// To-one values now known, by object and relationship.
    var toOnes: [ObjectID: [String: ObjectID?]] = [:]
    /// Objects whose to-one is no longer known.
    var unknown: Set<ObjectID> = []
    /// The entities on the other side of relationships whose cached value the save changed.
    var changedEntities: Set<String> = []

    var targets: Set<ObjectID> { Set(lists.keys).union(toOnes.keys) }
}
