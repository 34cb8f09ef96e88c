/// How a context keeps the relationships it knows true to deletions and to moves reported by
/// saves and change events.
extension ContextState {
    /// Takes deleted objects out of every relationship that holds them, in the rows and in the
    /// pending changes (the nullify rule; the objects a cascade or deny rule concerns are
    /// deleted too, so the same holds for them).
    mutating func nullify(_ deleted: Set<ObjectID>) {
        guard !deleted.isEmpty else { return }
        func mentions(_ relationships: [String: RelationshipValue]) -> Bool {
            relationships.values.contains { $0.objectIDs.contains(where: deleted.contains) }
        }
        func removing(_ relationships: [String: RelationshipValue]) -> [String: RelationshipValue] {
            relationships.mapValues { $0.removing(deleted) }
        }
        table.updateRows(where: { mentions($0.relationships) }, with: { $0.relationships = removing($0.relationships) })
        for (id, change) in pending where mentions(change.relationships) {
            pending[id]?.relationships = removing(change.relationships)
        }
    }

    /// Keeps the to-many lists this context knows in step with the to-one values `nodes` report
    /// (a save's answer, another context's change event): a track that moved to another album
    /// leaves the old album's `tracks` and joins the new one's, even when the answer does not
    /// mention either album (a REST backend's answer to a PATCH of the track does not).
    mutating func keepInversesInStep(with nodes: [Node], model: ObjectModel) {
        // (owner entity, to-many name) → member → its owner now (`nil`: none).
        var owners: [String: [String: [ObjectID: ObjectID?]]] = [:]
        for node in nodes where !node.relationships.isEmpty {
            guard let entity = model.entity(named: node.id.entity) else { continue }
            for relationship in entity.relationships where !relationship.isToMany {
                guard let inverse = relationship.inverse, let value = node.relationships[relationship.name],
                    model.entity(named: relationship.destination)?.relationship(named: inverse)?.isToMany == true
                else { continue }
                owners[relationship.destination, default: [:]][inverse, default: [:]][node.id] = value.objectIDs.first
            }
        }
        guard !owners.isEmpty else { return }
        table.updateRows(
            where: { row in
                owners[row.id.entity]?.keys.contains { row.relationships[$0] != nil } ?? false
            },
            with: { row in
                for (name, members) in owners[row.id.entity] ?? [:] {
                    guard case .toMany(let list)? = row.relationships[name] else { continue }
                    var kept = list.filter { member in members[member].map { $0 == row.id } ?? true }
                    let present = Set(kept)
                    for (member, owner) in members.sorted(by: { $0.key.description < $1.key.description })
                    where owner == row.id && !present.contains(member) {
                        kept.append(member)
                    }
                    row.relationships[name] = .toMany(kept)
                }
            })
    }

    /// A relationship's value as this context sees it: its unsaved change, else the last known
    /// value (`loaded`, when the chain just answered it), else `nil` (not known; an object this
    /// context inserted holds nothing yet). A to-many whose inverse is a to-one follows the
    /// unsaved to-ones: a member whose to-one now points elsewhere leaves it, an object whose
    /// to-one now points here joins it. The to-one is what a save sends, so a list never goes
    /// stale against a move saved elsewhere.
    func relationship(
        _ relationship: RelationshipDescription, of id: ObjectID, model: ObjectModel, loaded: RelationshipValue? = nil
    )
        -> RelationshipValue?
    {
        let name = relationship.name
        let known =
            pending[id]?.relationships[name] ?? table.row(for: id)?.relationships[name] ?? loaded
            ?? (pending[id]?.kind == .inserted || id.isTemporary
                ? (relationship.isToMany ? .toMany([]) : .toOne(nil)) : nil)
        guard let known, case .toMany(var members) = known, !pending.isEmpty,
            let inverse = model.toOneInverse(of: relationship)
        else { return known }
        members = members.filter { member in pending[member]?.relationships[inverse]?.objectIDs.contains(id) ?? true }
        let present = Set(members)
        for (member, change) in pending.sorted(by: { $0.key.description < $1.key.description })
        where !present.contains(member) && change.relationships[inverse]?.objectIDs.contains(id) == true {
            members.append(member)
        }
        return .toMany(members)
    }

    /// Whether `id` is deleted in this context but not saved yet.
    func isPendingDeletion(_ id: ObjectID) -> Bool {
        !pending.isEmpty && pending[id]?.kind == .deleted
    }
}

extension RelationshipValue {
    /// The same value without the IDs in `ids` (a to-one holding one of them becomes empty).
    func removing(_ ids: Set<ObjectID>) -> RelationshipValue {
        switch self {
        case .toOne(let id): .toOne(id.flatMap { ids.contains($0) ? nil : $0 })
        case .toMany(let list): .toMany(list.filter { !ids.contains($0) })
        }
    }
}

extension ObjectModel {
    /// The name of the to-one on the destination that is `relationship`'s inverse, when it is a
    /// to-many with one: the side a save sends.
    func toOneInverse(of relationship: RelationshipDescription) -> String? {
        guard relationship.isToMany, let inverse = relationship.inverse,
            entity(named: relationship.destination)?.relationship(named: inverse)?.isToMany == false
        else { return nil }
        return inverse
    }
}
