/// What an `ObjectContext` holds: the objects it has handed out (for uniquing), the row cache of
/// last-known values, and the changes not yet saved.
struct ContextState {
    var registry: [ObjectID: WeakObject] = [:]
    /// The last known state of each object, from fetches, faults, saves and change events.
    var rows: [ObjectID: Node] = [:]
    var pending: [ObjectID: PendingChange] = [:]
    /// Objects whose saved changes an outbox holds until the backend can be reached, with how
    /// many of its saves change each; their rows show those changes already.
    var unsent: [ObjectID: Int] = [:]
    /// Faults handed out together, for batch faulting.
    var faultGroups = FaultGroups()
    private var registrationsSincePrune = 0

    /// The object for `id`, created on first use, the same one afterwards while it is alive.
    mutating func object(for id: ObjectID, context: ObjectContext) -> ManagedObject {
        // One lookup finds the registered object or the slot for a new one.
        let (object, isNew) = registry[id, default: WeakObject()].resolve {
            ManagedObject(id: id, context: context)
        }
        guard isNew else { return object }
        registrationsSincePrune += 1
        if registrationsSincePrune > 1_000 && registrationsSincePrune > registry.count {
            registry = registry.filter { $0.value.object != nil }
            registrationsSincePrune = 0
        }
        return object
    }

    /// Records what a fetch, fault or event says about objects. Relationships the new node does
    /// not mention are kept from what was known.
    mutating func absorb(_ nodes: [Node]) {
        // One resize for a large fetch instead of one at every doubling.
        rows.reserveCapacity(rows.count + nodes.count)
        for node in nodes {
            faultGroups.remove(node.id)
            // A new object is stored with one lookup; a known one is merged into its row.
            guard var row = rows.updateValue(node, forKey: node.id) else { continue }
            row.attributes = node.attributes
            row.relationships.merge(node.relationships) { _, new in new }
            row.version = node.version ?? row.version
            row.sharedFreshness = node.sharedFreshness ?? row.sharedFreshness
            rows[node.id] = row
        }
    }

    /// Shows changes that were saved but not sent yet (an outbox holds them) as if the backend
    /// had taken them: inserted objects get rows under their temporary IDs (with the model's
    /// defaults), updates are merged into the rows, deleted objects are forgotten.
    mutating func applyUnsent(_ sent: [ObjectID: PendingChange], pending: Set<ObjectID>, model: Model) {
        for (id, change) in sent where pending.contains(id) {
            unsent[id, default: 0] += 1
            switch change.kind {
            case .inserted:
                var attributes = change.attributes
                for attribute in model.entity(named: id.entity)?.attributes ?? []
                where attributes[attribute.name] == nil {
                    if let value = attribute.defaultValue { attributes[attribute.name] = value }
                }
                rows[id] = Node(id: id, attributes: AttributeValues(attributes), relationships: change.relationships)
            case .updated:
                guard var row = rows[id] else { continue }
                row.apply(
                    Node(id: id, attributes: AttributeValues(change.attributes), relationships: change.relationships))
                rows[id] = row
            case .deleted:
                rows.removeValue(forKey: id)
                registry.removeValue(forKey: id)
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
            rows.removeValue(forKey: id)
            if id.isTemporary { registry.removeValue(forKey: id) }
        }
    }

    /// Whether `id` is an object whose values are not loaded.
    func isFault(_ id: ObjectID) -> Bool {
        rows[id] == nil && pending[id]?.kind != .inserted && !id.isTemporary
    }

    /// The relationship's value as this context sees it: pending change, else the row, else
    /// unknown (`nil`).
    func relationship(_ name: String, of id: ObjectID) -> RelationshipValue? {
        pending[id]?.relationships[name] ?? rows[id]?.relationships[name]
    }

    /// Replaces every temporary ID with its permanent one. Temporary IDs this context never
    /// handed out (another context's inserts) cannot appear in it, so those cost nothing.
    mutating func remap(_ permanentIDs: [ObjectID: ObjectID]) {
        let permanentIDs = permanentIDs.filter { temporary, _ in
            registry[temporary] != nil || pending[temporary] != nil || rows[temporary] != nil
                || unsent[temporary] != nil
        }
        guard !permanentIDs.isEmpty else { return }
        for (temporary, permanent) in permanentIDs {
            if let entry = registry.removeValue(forKey: temporary) { registry[permanent] = entry }
            if let change = pending.removeValue(forKey: temporary) { pending[permanent] = change }
            if let count = unsent.removeValue(forKey: temporary) { unsent[permanent, default: 0] += count }
            if var row = rows.removeValue(forKey: temporary) {
                row.id = permanent
                rows[permanent] = row
            }
        }
        func mentionsTemporary(_ relationships: [String: RelationshipValue]) -> Bool {
            relationships.values.contains { $0.objectIDs.contains(where: \.isTemporary) }
        }
        for id in rows.compactMap({ mentionsTemporary($0.value.relationships) ? $0.key : nil }) {
            guard var row = rows[id] else { continue }
            row.relationships = row.relationships.mapValues { $0.remapping(permanentIDs) }
            rows[id] = row
        }
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

/// A weak reference, so the registry does not keep unchanged objects alive. (A struct: held in
/// the registry's table, without an allocation of its own per object.)
struct WeakObject {
    weak var object: ManagedObject?

    init(_ object: ManagedObject? = nil) {
        self.object = object
    }

    /// The object held, or a new one from `make` (then held); and whether it is new.
    mutating func resolve(_ make: () -> ManagedObject) -> (object: ManagedObject, isNew: Bool) {
        if let object { return (object, false) }
        let made = make()
        object = made
        return (made, true)
    }
}
