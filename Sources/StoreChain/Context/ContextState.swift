/// What an `ObjectContext` holds: the objects it has handed out (for uniquing), the row cache of
/// last-known values, and the changes not yet saved.
struct ContextState {
    /// The objects handed out (for uniquing) and the last known state of each object, from
    /// fetches, faults, saves and change events.
    var table = ObjectTable()
    var pending: [ObjectID: PendingChange] = [:]
    /// Objects whose saved changes an outbox holds until the backend can be reached, with how
    /// many of its saves change each; their rows show those changes already.
    var unsent: [ObjectID: Int] = [:]
    /// Faults handed out together, for batch faulting.
    var faultGroups = FaultGroups()

    /// The object for `id`, created on first use, the same one afterwards while it is alive.
    mutating func object(for id: ObjectID, context: ObjectContext) -> ManagedObject {
        table.object(for: id) { slot in
            ManagedObject(
                id: id, slot: slot, entityPosition: context.model.entityPosition(named: id.entity), context: context)
        }
    }

    /// Records what a fetch, fault or event says about objects. Relationships the new node does
    /// not mention are kept from what was known.
    mutating func absorb(_ nodes: [Node], asOf events: Int = .max) {
        table.reserveCapacity(nodes.count)
        for node in nodes {
            faultGroups.remove(node.id)
            table.absorb(node, asOf: events)
        }
    }

    /// Records what a fetch returned, and the object for each node, in order. `events`: how many
    /// change events the context had merged when the fetch was sent (`ObjectTable.absorb`).
    mutating func absorbObjects(_ nodes: [Node], asOf events: Int, context: ObjectContext) -> [ManagedObject] {
        table.reserveCapacity(nodes.count)
        // The nodes of a fetch are of one entity, mostly: its position is looked up once.
        var entity: (name: String, position: Int?)?
        return nodes.map { node in
            faultGroups.remove(node.id)
            let slot = table.absorb(node, asOf: events)
            return table.object(at: slot) { slot in
                if entity?.name != node.id.entity {
                    entity = (node.id.entity, context.model.entityPosition(named: node.id.entity))
                }
                return ManagedObject(id: node.id, slot: slot, entityPosition: entity?.position, context: context)
            }
        }
    }

    /// Shows changes that were saved but not sent yet (an outbox holds them) as if the backend
    /// had taken them: inserted objects get rows under their temporary IDs (with the model's
    /// defaults), updates are merged into the rows, deleted objects are forgotten.
    mutating func applyUnsent(_ sent: [ObjectID: PendingChange], pending: Set<ObjectID>, model: ObjectModel) {
        for (id, change) in sent where pending.contains(id) {
            unsent[id, default: 0] += 1
            switch change.kind {
            case .inserted:
                var attributes = change.attributes
                for attribute in model.entity(named: id.entity)?.attributes ?? []
                where attributes[attribute.name] == nil {
                    if let value = attribute.defaultValue { attributes[attribute.name] = value }
                }
                table.setRow(Node(id: id, attributes: AttributeValues(attributes), relationships: change.relationships))
            case .updated:
                table.updateRow(for: id) { row in
                    row.apply(
                        Node(
                            id: id, attributes: AttributeValues(change.attributes), relationships: change.relationships)
                    )
                }
            case .deleted:
                table.forget(id)
            }
        }
    }

    /// Takes in what an outbox reports: changes that reached the backend are no longer unsent,
    /// and changes the backend refused are withdrawn (an inserted object is gone, any other is
    /// read again on next use).
    mutating func settleUnsent(sent: Set<ObjectID>, rejected: Set<ObjectID>) {
        for id in sent {
            guard let count = unsent[id] else { continue }
            unsent[id] = count > 1 ? count - 1 : nil
        }
        for id in rejected where unsent.removeValue(forKey: id) != nil {
            if id.isTemporary { table.forget(id) } else { table.removeRow(for: id) }
        }
    }

    /// Whether `id` is an object whose values are not loaded.
    func isFault(_ id: ObjectID) -> Bool {
        table.row(for: id) == nil && pending[id]?.kind != .inserted && !id.isTemporary
    }

    /// The relationship's value as this context sees it: pending change, else the row, else
    /// unknown (`nil`).
    func relationship(_ name: String, of id: ObjectID) -> RelationshipValue? {
        pending[id]?.relationships[name] ?? table.row(for: id)?.relationships[name]
    }

    /// Replaces every temporary ID with its permanent one. Temporary IDs this context never
    /// handed out (another context's inserts) cannot appear in it, so those cost nothing.
    mutating func remap(_ permanentIDs: [ObjectID: ObjectID]) {
        let permanentIDs = permanentIDs.filter { temporary, _ in
            table.knows(temporary) || pending[temporary] != nil || unsent[temporary] != nil
        }
        guard !permanentIDs.isEmpty else { return }
        for (temporary, permanent) in permanentIDs {
            table.registeredObject(for: temporary)?.updateID(permanent)
            table.remap(temporary, to: permanent)
            if let change = pending.removeValue(forKey: temporary) { pending[permanent] = change }
            if let count = unsent.removeValue(forKey: temporary) { unsent[permanent, default: 0] += count }
        }
        func mentionsTemporary(_ relationships: [String: RelationshipValue]) -> Bool {
            relationships.values.contains { $0.objectIDs.contains(where: \.isTemporary) }
        }
        table.updateRows(
            where: { mentionsTemporary($0.relationships) },
            with: { $0.relationships = $0.relationships.mapValues { $0.remapping(permanentIDs) } })
        for id in pending.compactMap({ mentionsTemporary($0.value.relationships) ? $0.key : nil }) {
            guard var change = pending[id] else { continue }
            change.relationships = change.relationships.mapValues { $0.remapping(permanentIDs) }
            pending[id] = change
        }
    }
}

/// Changes to one object that are not saved yet.
struct PendingChange {
    enum Kind: Equatable {
        case inserted, updated, deleted
    }

    var kind: Kind
    /// Only the attributes that changed; `null` clears one.
    var attributes: [String: Value] = [:]
    /// Only the relationships that changed.
    var relationships: [String: RelationshipValue] = [:]
    /// Keeps a changed object alive until it is saved.
    let object: ManagedObject

    func sameChanges(as other: PendingChange) -> Bool {
        kind == other.kind && attributes == other.attributes && relationships == other.relationships
    }
}

/// A weak reference, so the table does not keep unchanged objects alive. (A struct: held in the
/// table's entries, without an allocation of its own per object.)
struct WeakObject {
    weak var object: ManagedObject?

    init(_ object: ManagedObject? = nil) {
        self.object = object
    }
}
