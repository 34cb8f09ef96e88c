extension ObjectContext {
    func set(_ value: Value, for name: String, of object: ManagedObject) throws(StoreChainError) {
        let entity = try object.entity
        let checked = try checked(value, for: name, in: entity)
        if name == entity.key && !object.objectID.isTemporary {
            throw StoreChainError(
                .invalidRequest, "the key '\(name)' of \(object.objectID) cannot change",
                suggestion: "insert a new object with the new key and delete this one")
        }
        try state.withLock { state throws(StoreChainError) in
            let id = object.objectID
            try Self.requireNotDeleted(id, in: state)
            state.pending[id, default: PendingChange(kind: .updated, object: object)].attributes[name] = checked
        }
    }

    func setRelationship(_ name: String, of object: ManagedObject, to targets: [ManagedObject], toMany: Bool)
        throws(StoreChainError)
    {
        let entity = try object.entity
        let relationship = try entity.requireRelationship(name)
        guard relationship.isToMany == toMany else {
            throw StoreChainError(
                .typeMismatch,
                "'\(entity.name).\(name)' is a \(relationship.isToMany ? "to-many" : "to-one") relationship",
                suggestion: relationship.isToMany ? "use setRelatedObjects(_:for:)" : "use setRelated(_:for:)")
        }
        for target in targets {
            guard target.context === self else {
                throw StoreChainError(
                    .invalidRequest, "\(target.objectID) belongs to another context",
                    suggestion: "use context.object(with:) to get it in this context")
            }
            guard target.objectID.entity == relationship.destination else {
                throw StoreChainError(
                    .typeMismatch,
                    "'\(entity.name).\(name)' holds \(relationship.destination) objects, not \(target.objectID.entity)")
            }
        }
        let ids = targets.map(\.objectID)
        let value: RelationshipValue = toMany ? .toMany(ids) : .toOne(ids.first)
        try state.withLock { state throws(StoreChainError) in
            try Self.requireNotDeleted(object.objectID, in: state)
            for id in ids { try Self.requireNotDeleted(id, in: state) }
            apply(value, to: relationship, of: object, in: &state)
        }
    }

    private static func requireNotDeleted(_ id: ObjectID, in state: ContextState) throws(StoreChainError) {
        if state.pending[id]?.kind == .deleted {
            throw StoreChainError(.invalidRequest, "\(id) is deleted in this context and cannot be changed")
        }
    }

    /// Sets a relationship and its inverse. Between a to-one and a to-many, the to-one is what
    /// changes (it is what a save sends; the to-many follows it when read, see
    /// `ContextState.relationship(_:of:model:loaded:)`); otherwise both sides change where the
    /// far side is known.
    private func apply(
        _ value: RelationshipValue, to relationship: RelationshipDescription, of object: ManagedObject,
        in state: inout ContextState
    ) {
        let id = object.objectID
        let old = state.relationship(relationship, of: id, model: model)?.objectIDs ?? []
        record(value, for: relationship.name, of: object, in: &state)
        guard let inverseName = relationship.inverse,
            let inverse = model.entity(named: relationship.destination)?.relationship(named: inverseName)
        else { return }
        let new = value.objectIDs
        if !relationship.isToMany, inverse.isToMany { return }
        if relationship.isToMany, !inverse.isToMany {
            for member in old where !new.contains(member) {
                record(.toOne(nil), for: inverseName, of: state.object(for: member, context: self), in: &state)
            }
            for member in new where !old.contains(member) {
                record(.toOne(id), for: inverseName, of: state.object(for: member, context: self), in: &state)
            }
            return
        }
        for target in old where !new.contains(target) {
            let targetObject = state.object(for: target, context: self)
            switch state.relationship(inverseName, of: target) {
            case .toOne(id)?: record(.toOne(nil), for: inverseName, of: targetObject, in: &state)
            case .toMany(let ids)?:
                record(.toMany(ids.filter { $0 != id }), for: inverseName, of: targetObject, in: &state)
            default: break
            }
        }
        for target in new where !old.contains(target) {
            let targetObject = state.object(for: target, context: self)
            guard inverse.isToMany else {
                record(.toOne(id), for: inverseName, of: targetObject, in: &state)
                continue
            }
            if case .toMany(let ids)? = state.relationship(inverseName, of: target), !ids.contains(id) {
                record(.toMany(ids + [id]), for: inverseName, of: targetObject, in: &state)
            }
        }
    }

    private func record(
        _ value: RelationshipValue, for name: String, of object: ManagedObject, in state: inout ContextState
    ) {
        let id = object.objectID
        guard state.pending[id]?.kind != .deleted else { return }
        state.pending[id, default: PendingChange(kind: .updated, object: object)].relationships[name] = value
    }
}
