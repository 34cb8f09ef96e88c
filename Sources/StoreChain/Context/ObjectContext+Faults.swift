extension ObjectContext {
    func isFault(_ object: ManagedObject) -> Bool {
        state.withLock { state in
            let id = object.objectID
            return state.rows[id] == nil && state.pending[id]?.kind != .inserted
        }
    }

    func cachedValue(of object: ManagedObject, _ name: String) -> Value? {
        state.withLock { state in
            let id = object.objectID
            if let value = state.pending[id]?.attributes[name] { return value }
            if state.pending[id]?.kind == .inserted {
                return model.entity(named: id.entity)?.attribute(named: name)?.defaultValue ?? .null
            }
            return state.rows[id].map { $0[attribute: name] }
        }
    }

    func value(of object: ManagedObject, _ name: String) async throws -> Value {
        let entity = try object.entity
        guard entity.attribute(named: name) != nil else {
            throw StoreChainError(
                .unknownKeyPath, "entity '\(entity.name)' has no attribute '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: entity.propertyNames))
        }
        if let value = cachedValue(of: object, name) { return value }
        try await fault(object)
        return cachedValue(of: object, name) ?? .null
    }

    /// Loads an object's values through the chain.
    func fault(_ object: ManagedObject) async throws {
        let id = object.objectID
        let response = try await chain.send(.objectFault(id), context: makeRequestContext())
        guard let node = try response.objectNode() else {
            throw StoreChainError(
                .unavailable, "\(id) no longer exists, so its values cannot be loaded",
                suggestion: "it was deleted upstream; refetch to get the current objects")
        }
        state.withLock { state in
            state.absorb([node])
            state.absorb(response.related)
        }
    }

    func related(_ name: String, of object: ManagedObject) async throws -> [ManagedObject] {
        let entity = try object.entity
        guard entity.relationship(named: name) != nil else {
            throw StoreChainError(
                .unknownKeyPath, "entity '\(entity.name)' has no relationship '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: entity.relationships.map(\.name)))
        }
        if let objects = knownRelated(name, of: object) { return objects }
        if isFault(object) {
            try await fault(object)
            if let objects = knownRelated(name, of: object) { return objects }
        }
        let id = object.objectID
        if id.isTemporary { return [] }
        let response = try await chain.send(.relationshipFault(id, relationship: name), context: makeRequestContext())
        let value = try response.relationshipValue()
        return state.withLock { state in
            state.absorb(response.related)
            if var row = state.rows[id] {
                row.relationships[name] = value
                state.rows[id] = row
            }
            return value.objectIDs.map { state.object(for: $0, context: self) }
        }
    }

    private func knownRelated(_ name: String, of object: ManagedObject) -> [ManagedObject]? {
        state.withLock { state in
            let id = object.objectID
            if let value = state.relationship(name, of: id) {
                return value.objectIDs.map { state.object(for: $0, context: self) }
            }
            return state.pending[id]?.kind == .inserted ? [] : nil
        }
    }
}
