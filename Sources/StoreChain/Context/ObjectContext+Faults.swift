extension ObjectContext {
    func isFault(_ object: ManagedObject) -> Bool {
        state.withLock { state in
            state.table.row(of: object) == nil
                && (state.pending.isEmpty || state.pending[object.objectID]?.kind != .inserted)
        }
    }

    /// How many faults of `entity` fire together: the option given, else the batch size of a
    /// batching handler in the chain that batches the entity, else one.
    func faultBatchSize(for entity: String) -> Int {
        if let faultBatchSize { return faultBatchSize }
        return chain.handlers(of: (any FaultBatching).self, for: .objectFault, entity: entity)
            .lazy.compactMap { $0.faultBatchSize(for: entity) }.first ?? 1
    }

    func cachedValue(of object: ManagedObject, _ name: String) -> Value? {
        state.withLock { state in currentValue(name, of: object, in: state) }
    }

    /// Every attribute's value as the context holds it, read at once (so no merge lands between
    /// two of them); `nil` when one of them is not loaded.
    func loadedValues(of object: ManagedObject) -> [String: Value]? {
        guard let entity = model.entity(named: object.objectID.entity) else { return nil }
        return state.withLock { state in
            var values: [String: Value] = [:]
            for attribute in entity.attributes {
                guard let value = currentValue(attribute.name, of: object, in: state) else { return nil }
                values[attribute.name] = value
            }
            return values
        }
    }

    private func currentValue(_ name: String, of object: ManagedObject, in state: ContextState) -> Value? {
        if !state.pending.isEmpty, let change = state.pending[object.objectID] {
            if let value = change.attributes[name] { return value }
            if change.kind == .inserted {
                return model.entity(named: object.objectID.entity)?.attribute(named: name)?.defaultValue ?? .null
            }
        }
        return state.table.value(name, of: object)
    }

    /// An attribute's value if it is loaded, `nil` when the object must be faulted in first.
    ///
    /// - Throws: `.unknownKeyPath` for a name the entity does not have, `.unknownEntity` for an
    ///   object of an entity the model does not have.
    func loadedValue(of object: ManagedObject, _ name: String) throws(StoreChainError) -> Value? {
        guard model.hasAttribute(name, inEntityAt: object.entityPosition) else {
            let entity = try model.requireEntity(object.objectID.entity)
            throw StoreChainError(
                .unknownKeyPath, "entity '\(entity.name)' has no attribute '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: entity.propertyNames))
        }
        if let value = cachedValue(of: object, name) { return value }
        // The key is in the object's ID: reading it fires no fault.
        let id = object.objectID
        if !id.isTemporary, let key = id.key, model.entity(named: id.entity)?.key == name { return key }
        return nil
    }

    /// An attribute's value after faulting the object in (the name is known to be valid).
    ///
    /// A change event that names the object while its fault is out makes the answer too old to
    /// keep (`ObjectTable.absorb`), and the caches have forgotten the object: the fault is sent
    /// again, up to `faultAttempts` times in all, never answered as `.null`.
    func faultedValue(of object: ManagedObject, _ name: String) async throws -> Value {
        for _ in 0..<Self.faultAttempts {
            try await fault(object)
            if let value = cachedValue(of: object, name) { return value }
        }
        throw StoreChainError(
            .incompleteData,
            "\(object.objectID) changed elsewhere each of the \(Self.faultAttempts) times its values were loaded",
            suggestion: "read it again once the changes to it have settled")
    }

    /// How many times a value's fault is sent while changes to the object keep overtaking it.
    static var faultAttempts: Int { 3 }

    /// Loads an object's values through the chain, with the neighbouring faults handed out
    /// with it (up to the fault batch size), sent together so a batching handler merges them.
    func fault(_ object: ManagedObject) async throws {
        let id = object.objectID
        let size = faultBatchSize(for: id.entity)
        let batch = state.withLock { state in state.faultGroups.batch(for: id, size: size) { state.isFault($0) } }
        let context = makeRequestContext()
        let chain = self.chain
        let events = state.withLock { $0.table.events }
        let own = try await withThrowingTaskGroup(of: StoreResponse?.self, returning: StoreResponse.self) { group in
            for neighbour in batch.dropFirst() {
                // A neighbour that fails stays a fault and fails on its own when used.
                group.addTask { try? await chain.send(.objectFault(neighbour), context: context) }
            }
            let own = try await chain.send(.objectFault(id), context: context)
            for try await case let response? in group {
                guard let node = try? response.objectNode() else { continue }
                state.withLock { state in
                    state.absorb([node], asOf: events)
                    state.absorb(response.related, asOf: events)
                }
            }
            return own
        }
        guard let node = try own.objectNode() else {
            throw StoreChainError(
                .unavailable, "\(id) no longer exists, so its values cannot be loaded",
                suggestion: "it was deleted upstream; refetch to get the current objects")
        }
        state.withLock { state in
            state.absorb([node], asOf: events)
            state.absorb(own.related, asOf: events)
        }
    }

    /// The objects relationship `name` of `object` holds, faulting it in when needed. Objects
    /// deleted in this context (not saved yet) are left out unless `includingDeleted`: to the
    /// app they are gone already, as the nullify rule will make them.
    func related(_ name: String, of object: ManagedObject, includingDeleted: Bool = false) async throws
        -> [ManagedObject]
    {
        let objects = try await loadRelated(name, of: object)
        guard !includingDeleted else { return objects }
        return state.withLock { state in objects.filter { !state.isPendingDeletion($0.objectID) } }
    }

    private func loadRelated(_ name: String, of object: ManagedObject) async throws -> [ManagedObject] {
        let entity = try object.entity
        let relationship = try entity.requireRelationship(name)
        if let objects = knownRelated(relationship, of: object) { return objects }
        if isFault(object) {
            try await fault(object)
            if let objects = knownRelated(relationship, of: object) { return objects }
        }
        let id = object.objectID
        let events = state.withLock { $0.table.events }
        let response = try await chain.send(.relationshipFault(id, relationship: name), context: makeRequestContext())
        let value = try response.relationshipValue()
        state.withLock { state in
            state.absorb(response.related, asOf: events)
            state.table.updateRow(for: id, asOf: events) { $0.relationships[name] = value }
        }
        return knownRelated(relationship, of: object, loaded: value) ?? []
    }

    /// The objects the relationship holds as this context sees it (see
    /// `ContextState.relationship(_:of:model:)`), `nil` when it is not known; `loaded` is what
    /// the chain just answered for it.
    func knownRelated(
        _ relationship: RelationshipDescription, of object: ManagedObject, loaded: RelationshipValue? = nil
    )
        -> [ManagedObject]?
    {
        state.withLock { state in
            guard let value = state.relationship(relationship, of: object.objectID, model: model, loaded: loaded)
            else { return nil }
            let objects = value.objectIDs.map { state.object(for: $0, context: self) }
            state.faultGroups.register(value.objectIDs.filter { state.isFault($0) })
            return objects
        }
    }
}
