extension ObjectContext {
    /// Sends every pending change in one save request. On success, temporary IDs are replaced
    /// by permanent ones everywhere (objects, relationships, the row cache); on failure the
    /// context is left exactly as it was and the error names the object at fault.
    ///
    /// Saves of one context run one at a time; changes made while a save is in flight stay
    /// pending for the next save.
    ///
    /// With an outbox in the chain, a save made while the backend cannot be reached returns
    /// normally with `SaveResult.isPending`: the objects show the changes at once (inserted
    /// ones keep their temporary IDs), `ManagedObject.hasUnsentChanges` is true, and the
    /// outbox sends them later (`sync()`), after which the IDs become permanent.
    ///
    /// - Returns: what the backend saved, or which changes are pending.
    @discardableResult
    public func save() async throws -> SaveResult {
        try await saveLock.withLock {
            let cascaded = try await self.objectsDeletedByRules()
            let (changes, sent) = try self.changesToSave(cascaded: cascaded)
            guard !changes.isEmpty else { return SaveResult() }
            let (response, permanentIDs) = try await self.mergingEvents {
                try await self.chain.send(.save(changes), context: self.makeRequestContext())
            }
            let result = try response.saveResult()
            // An outbox may have sent earlier saves first, giving objects of this one their keys.
            self.applySaved(
                result,
                sent: permanentIDs.isEmpty
                    ? sent : Dictionary(sent.map { (permanentIDs[$0.key] ?? $0.key, $0.value) }) { _, last in last })
            return result
        }
    }

    /// Asks the chain's outbox to send the saves it holds now, rather than at its next retry.
    /// When it returns, the objects show what was sent (permanent IDs, `hasUnsentChanges`).
    ///
    /// - Returns: how many saves are still pending (the backend is still out of reach).
    @discardableResult
    public func sync() async throws -> Int {
        try await mergingEvents { try await self.chain.sync() }.0
    }

    /// Runs `body`, then waits until the background merging has taken in the change events
    /// published meanwhile (an outbox's, about saves it sent), so that what the caller reads
    /// next is settled.
    ///
    /// - Returns: `body`'s result, and the permanent IDs the events of others (not this context's
    ///   own save) gave.
    private func mergingEvents<T>(_ body: () async throws -> T) async throws -> (T, [ObjectID: ObjectID]) {
        let (events, end, _) = chain.events.subscription()
        let value: T
        do {
            value = try await body()
        } catch {
            end()
            throw error
        }
        end()
        var permanentIDs: [ObjectID: ObjectID] = [:]
        for await event in events where event.source != name {
            permanentIDs.merge(event.permanentIDs) { _, new in new }
        }
        await mergePublishedChanges()
        return (value, permanentIDs)
    }

    /// Waits until this context has merged every change event published so far (another
    /// context's save, an outbox's replay, a deletion found upstream), so that what it reads
    /// next shows them. Merging runs in the background on its own; call this where the app must
    /// read what another context has just saved.
    public func mergePublishedChanges() async {
        await mergeProgress.wait(untilRead: chain.events.publishedCount)
    }

    /// Whether some saved changes have not reached the backend yet (an outbox holds them).
    public var hasUnsentChanges: Bool {
        state.withLock { !$0.unsent.isEmpty }
    }

    /// The save request for the pending changes and the deletions `cascaded` by delete rules,
    /// and a copy of what it sends. No change sent names a deleted object in a relationship
    /// (the nullify rule), and a new object a cascade deletes is not sent at all.
    private func changesToSave(cascaded: [ObjectID: ManagedObject]) throws(StoreChainError) -> (
        SaveChanges, [ObjectID: PendingChange]
    ) {
        try state.withLock { state throws(StoreChainError) in
            var changes = SaveChanges()
            var toSend = state.pending
            for (id, object) in cascaded {
                toSend[id] = PendingChange(kind: .deleted, object: object)
            }
            let deleted = Set(toSend.compactMap { $0.value.kind == .deleted ? $0.key : nil })
            for (id, var change) in toSend.sorted(by: { $0.key.description < $1.key.description }) {
                let entity = try model.requireEntity(id.entity)
                if change.kind != .deleted, !deleted.isEmpty {
                    change.relationships = change.relationships.mapValues { $0.removing(deleted) }
                }
                switch change.kind {
                case .inserted:
                    for attribute in entity.attributes
                    where !attribute.isOptional && attribute.defaultValue == nil && attribute.name != entity.key
                        && (change.attributes[attribute.name] ?? .null).isNull
                    {
                        throw StoreChainError(
                            .saveFailed, "\(id): required attribute '\(attribute.name)' has no value",
                            suggestion: "set it before saving, or give it a default in the model")
                    }
                    try Self.checkRequiredRelationships(of: entity, id, change, inserted: true)
                    changes.inserted.append(
                        Node(
                            id: id, attributes: AttributeValues(change.attributes), relationships: change.relationships)
                    )
                case .updated:
                    try Self.checkRequiredRelationships(of: entity, id, change, inserted: false)
                    changes.updated.append(
                        Node(
                            id: id, attributes: AttributeValues(change.attributes), relationships: change.relationships,
                            version: state.table.row(for: id)?.version))
                case .deleted:
                    // A new object a cascade deletes before it was ever saved is not sent: it is
                    // forgotten after the save. (One an outbox holds was saved: its deletion goes.)
                    guard state.pending[id]?.kind != .inserted else { continue }
                    changes.deleted.append(id)
                    if let version = state.table.row(for: id)?.version { changes.deletedVersions[id] = version }
                }
            }
            return (changes, toSend)
        }
    }

    /// A required to-one relationship must hold an object: one an insert never set, or a change
    /// that emptied it, fails here, naming the object and relationship, before anything is sent.
    private static func checkRequiredRelationships(
        of entity: EntityDescription, _ id: ObjectID, _ change: PendingChange, inserted: Bool
    ) throws(StoreChainError) {
        for relationship in entity.relationships where !relationship.isToMany && !relationship.isOptional {
            let value = change.relationships[relationship.name]
            guard value == .toOne(nil) || (inserted && value == nil) else { continue }
            throw StoreChainError(
                .saveFailed, "\(id): required relationship '\(relationship.name)' has no \(relationship.destination)",
                suggestion:
                    "set it with setRelated(_:for:) before saving, or make it optional in the model ('to-one: \(relationship.destination)?')"
            )
        }
    }

    private func applySaved(_ result: SaveResult, sent: [ObjectID: PendingChange]) {
        state.withLock { state in
            // As an event's: an answer sent before the save does not bring back the rows it changed.
            state.table.beginEvent()
            defer { state.table.endEvent() }
            state.table.noteNamed(Set(sent.keys).union(result.nodes.map(\.id)).union(result.deleted))
            for (id, change) in sent {
                // Changes made during the save are kept; what was sent is done.
                if let current = state.pending[id], current.sameChanges(as: change) {
                    state.pending.removeValue(forKey: id)
                } else if state.pending[id]?.kind == .inserted {
                    state.pending[id]?.kind = .updated
                }
            }
            state.applyUnsent(sent, pending: result.pending, model: model)
            state.remap(result.permanentIDs)
            // Everything this save deleted (a cascade's new objects, which were never sent,
            // included) is forgotten and leaves every relationship that held it.
            var deleted = Set(result.deleted)
            for (id, change) in sent where change.kind == .deleted {
                deleted.insert(id)
                // A cascade deleted it: changes it had pending went with it.
                state.pending.removeValue(forKey: id)
            }
            for id in deleted { state.table.forget(id) }
            state.nullify(deleted)
            // A save an outbox holds answers with the objects it inserts only; the relationships
            // its updates set move objects between lists too.
            let unsentUpdates = sent.compactMap { id, change in
                result.pending.contains(id) && change.kind == .updated && !change.relationships.isEmpty
                    ? Node(id: id, relationships: change.relationships) : nil
            }
            state.keepInversesInStep(with: result.nodes + unsentUpdates, model: model)
            state.absorb(result.nodes)
        }
    }

    /// Merges change events from other contexts and from handlers into the row cache, so
    /// registered objects show the new values.
    func startMergingEvents() {
        let (stream, _, publishedBefore) = chain.events.subscription()
        let ownName = name
        let progress = mergeProgress
        progress.start(after: publishedBefore)
        Task { [weak self] in
            defer { progress.end() }
            for await event in stream {
                if event.source != ownName {
                    guard let self else { return }
                    self.merge(event)
                }
                progress.advance()
            }
        }
    }

    /// Only objects this context knows take the event's values: absorbing every object saved
    /// anywhere would grow every context's row cache without end. An object the event names as
    /// changed without its new state (another process's save, heard of as IDs) is read again on
    /// next use, unless this context is changing it (its save then meets the new version). One
    /// an outbox holds a save of is read again too (the outbox shows the save over what the
    /// backend holds now; while it is out of reach the read fails rather than show old values).
    func merge(_ event: ChangeEvent) {
        state.withLock { state in
            state.table.beginEvent()
            defer { state.table.endEvent() }
            state.table.noteNamed(event.inserted.union(event.updated).union(event.deleted).union(event.nodes.map(\.id)))
            state.remap(event.permanentIDs)
            state.settleUnsent(sent: event.outbox.sent, rejected: event.outbox.rejected)
            for id in event.deleted { state.table.removeRow(for: id) }
            state.nullify(Set(event.deleted))
            state.keepInversesInStep(with: event.nodes + event.outbox.unsentUpdates, model: model)
            state.absorb(event.nodes.filter { state.table.knows($0.id) })
            for update in event.outbox.unsentUpdates { state.table.updateRow(for: update.id) { $0.apply(update) } }
            let described = Set(event.nodes.map(\.id)).union(event.outbox.unsentUpdates.map(\.id))
            for id in event.updated where !described.contains(id) && state.pending[id] == nil {
                state.table.removeRow(for: id)
            }
        }
    }
}
