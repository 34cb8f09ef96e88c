extension ObjectContext {
    /// The objects the pending deletions take with them by their relationships' delete rules:
    /// every object a `cascade` relationship of a deleted object holds, transitively, as this
    /// context sees it (its unsaved moves and inserts included). Loads the relationships it
    /// needs through the chain when the context does not know them.
    ///
    /// - Throws: `.saveFailed` when a `deny` relationship of a deleted object holds an object
    ///   that is not deleted too, or when nullifying would leave an object the context knows of
    ///   without a required to-one (an album without its band), naming both; the context is left
    ///   as it was.
    func objectsDeletedByRules() async throws -> [ObjectID: ManagedObject] {
        var deleting = state.withLock { state in
            Set(state.pending.compactMap { $0.value.kind == .deleted ? $0.key : nil })
        }
        var queue = Array(deleting)
        var cascaded: [ObjectID: ManagedObject] = [:]
        var denials: [(id: ObjectID, relationship: String, held: [ObjectID])] = []
        var nullified: [(id: ObjectID, relationship: RelationshipDescription, held: [ObjectID])] = []
        while let id = queue.popLast() {
            guard let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships {
                let held: [ManagedObject]
                if relationship.deleteRule == .nullify {
                    // Checked against what the context knows; nothing is loaded for it.
                    guard requiresItsObject(relationship),
                        let known = knownRelated(relationship, of: object(with: id))
                    else { continue }
                    held = known
                } else {
                    do {
                        held = try await related(relationship.name, of: object(with: id), includingDeleted: true)
                    } catch let error as StoreChainError where error.code == .unavailable {
                        held = []  // already gone upstream: it holds nothing any more
                    }
                }
                switch relationship.deleteRule {
                case .cascade:
                    for object in held where deleting.insert(object.objectID).inserted {
                        cascaded[object.objectID] = object
                        queue.append(object.objectID)
                    }
                case .deny: denials.append((id, relationship.name, held.map(\.objectID)))
                case .nullify: nullified.append((id, relationship, held.map(\.objectID)))
                }
            }
        }
        for denial in denials {
            let kept = denial.held.filter { !deleting.contains($0) }
            guard !kept.isEmpty else { continue }
            throw StoreChainError(
                .saveFailed,
                "\(denial.id) cannot be deleted: its relationship '\(denial.relationship)' (delete rule deny) holds \(kept.map(\.description).joined(separator: ", "))",
                suggestion: "delete those objects or move them elsewhere first, or change the rule in the model")
        }
        for (id, relationship, held) in nullified {
            let kept = held.filter { !deleting.contains($0) }
            guard let first = kept.first, let inverse = relationship.inverse else { continue }
            throw StoreChainError(
                .saveFailed,
                "\(id) cannot be deleted: \(kept.map(\.description).joined(separator: ", ")) require\(kept.count == 1 ? "s" : "") its '\(inverse)', which the nullify rule of '\(relationship.name)' would leave empty",
                suggestion:
                    "delete \(kept.count == 1 ? first.description : "them") too or move \(kept.count == 1 ? "it" : "them") to another \(id.entity) first, or give '\(relationship.name)' the delete rule cascade"
            )
        }
        return cascaded
    }

    /// Whether `relationship` is a to-many whose objects each require the owner (its inverse is
    /// a required to-one): nullifying it would leave them invalid.
    private func requiresItsObject(_ relationship: RelationshipDescription) -> Bool {
        guard let inverse = model.toOneInverse(of: relationship) else { return false }
        return model.entity(named: relationship.destination)?.relationship(named: inverse)?.isOptional == false
    }
}
