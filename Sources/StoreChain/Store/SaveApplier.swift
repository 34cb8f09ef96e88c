import Foundation

/// Applies a save to a dataset, all or nothing: checks every change against the model first,
/// assigns permanent keys, rewrites temporary IDs everywhere, and keeps both sides of every
/// relationship in step. An error names the object and what is wrong with it.
struct SaveApplier {
    let model: ObjectModel

    func apply(_ changes: SaveChanges, to dataset: inout Dataset) throws(StoreChainError) -> SaveResult {
        var working = dataset
        // Every object whose stored state changes, including the far side of relationships.
        var modified: Set<ObjectID> = []
        let permanentIDs = try assignKeys(changes.inserted, in: working)
        func remap(_ id: ObjectID) -> ObjectID { permanentIDs[id] ?? id }
        func remap(_ node: Node) -> Node { node.remapping(permanentIDs) }
        var touched: Set<ObjectID> = []
        // Every inserted object exists before any relationship is set, so new objects can point
        // at each other in any order.
        var insertedNodes: [(node: Node, entity: EntityDescription, role: String)] = []
        for (index, inserted) in changes.inserted.enumerated() {
            var node = remap(inserted)
            let role = "inserted[\(index)] \(inserted.id)"
            let entity = try entity(of: node, role: role)
            if let key = node.id.key { node.attributes[entity.key] = key }
            try fill(&node, entity: entity, role: role)
            working.upsert(Node(id: node.id, attributes: node.attributes, version: "1"))
            insertedNodes.append((node, entity, role))
            touched.insert(node.id)
        }
        for (node, entity, role) in insertedNodes {
            try setRelationships(of: node, entity: entity, in: &working, role: role, modified: &modified)
        }
        for (index, update) in changes.updated.enumerated() {
            let change = remap(update)
            let role = "updated[\(index)] \(update.id)"
            guard var node = working.node(for: change.id) else {
                throw failure(
                    "\(role): \(change.id) does not exist (it may have been deleted)", "refetch it and try again")
            }
            let entity = try entity(of: node, role: role)
            // An object saved before has a version; one loaded from data counts as version 0.
            let current = node.version ?? "0"
            if let expected = change.version, expected != current {
                throw failure(
                    "\(role): \(change.id) was changed by someone else (version \(current), expected \(expected))",
                    "refetch it, reapply the change and save again", code: .conflict)
            }
            for (name, value) in change.attributes {
                guard let attribute = entity.attribute(named: name) else {
                    throw failure("\(role): entity '\(entity.name)' has no attribute '\(name)'")
                }
                if name == entity.key, value != node.attributes[name] {
                    throw failure("\(role): the key '\(name)' cannot change", "insert a new object instead")
                }
                try check(value, against: attribute, role: role)
                node.attributes[name] = value.isNull ? Value?.none : value
            }
            node.version = String((Int(node.version ?? "0") ?? 0) + 1)
            working.upsert(node)
            try setRelationships(of: change, entity: entity, in: &working, role: role, modified: &modified)
            touched.insert(change.id)
        }
        for (index, deleted) in changes.deleted.enumerated() {
            let id = remap(deleted)
            guard let node = working.node(for: id) else {
                throw failure("deleted[\(index)]: \(id) does not exist", "it may already have been deleted")
            }
            if let expected = changes.deletedVersions[deleted], expected != node.version ?? "0" {
                throw failure(
                    "deleted[\(index)]: \(id) was changed by someone else (version \(node.version ?? "0"), expected \(expected))",
                    "refetch it, and delete it again if it should still go", code: .conflict)
            }
            let entity = try entity(of: node, role: "deleted[\(index)]")
            for relationship in entity.relationships {
                for target in node.relationships[relationship.name]?.objectIDs ?? [] {
                    try unlink(id, from: target, inverse: relationship.inverse, in: &working, modified: &modified)
                }
            }
            working.remove(id)
            touched.remove(id)
        }
        try checkRequired(touched, in: working)
        dataset = working
        let nodes = touched.union(modified).sorted { $0.description < $1.description }.compactMap(working.node(for:))
        return SaveResult(permanentIDs: permanentIDs, nodes: nodes, deleted: changes.deleted.map(remap))
    }

    private func failure(_ message: String, _ suggestion: String? = nil, code: StoreChainError.Code = .saveFailed)
        -> StoreChainError
    {
        StoreChainError(code, message, suggestion: suggestion)
    }

    private func entity(of node: Node, role: String) throws(StoreChainError) -> EntityDescription {
        guard let entity = model.entity(named: node.id.entity) else {
            throw failure("\(role): unknown entity '\(node.id.entity)'")
        }
        return entity
    }

    /// Permanent IDs for inserted objects: the key they carry, or the next integer key (above
    /// every key held or deleted before), or a new UUID for string and uuid keys.
    private func assignKeys(_ inserted: [Node], in dataset: Dataset) throws(StoreChainError) -> [ObjectID: ObjectID] {
        var nextInteger: [String: Int] = [:]
        var ids: [ObjectID: ObjectID] = [:]
        var taken: Set<ObjectID> = []
        for (index, node) in inserted.enumerated() {
            let entity = try entity(of: node, role: "inserted[\(index)]")
            guard let keyType = entity.keyAttribute?.type else { continue }
            var key = node.id.key ?? node.attributes[entity.key] ?? .null
            if key.isNull {
                switch keyType {
                case .integer:
                    let next = nextInteger[entity.name] ?? highestIntegerKey(of: entity.name, in: dataset) + 1
                    nextInteger[entity.name] = next + 1
                    key = .integer(next)
                case .uuid: key = .uuid(UUID())
                default: key = .string(UUID().uuidString)
                }
            }
            try check(key, against: AttributeDescription(entity.key, keyType), role: "inserted[\(index)] \(node.id)")
            let permanent = ObjectID(entity: entity.name, key: key)
            if dataset.node(for: permanent) != nil || !taken.insert(permanent).inserted {
                throw failure("inserted[\(index)] \(node.id): \(permanent) already exists", "use another key")
            }
            ids[node.id] = permanent
        }
        return ids
    }

    /// The highest integer key the entity's objects hold or held before they were deleted; 0 for none.
    private func highestIntegerKey(of entity: String, in dataset: Dataset) -> Int {
        let held = dataset.nodes(of: entity).compactMap {
            if case .integer(let value)? = $0.id.key { value } else { nil }
        }
        return max(held.max() ?? 0, dataset.highestRemovedIntegerKeys[entity] ?? 0)
    }

    private func check(_ value: Value, against attribute: AttributeDescription, role: String) throws(StoreChainError) {
        if value.isNull {
            guard attribute.isOptional else {
                throw failure("\(role): required attribute '\(attribute.name)' cannot be nil")
            }
            return
        }
        if value.type != attribute.type {
            throw failure(
                "\(role): attribute '\(attribute.name)' is \(attribute.type.rawValue), but the value is \(value.type?.rawValue ?? "nil") \(value)"
            )
        }
    }

    /// Checks every attribute of an inserted node, filling in defaults.
    private func fill(_ node: inout Node, entity: EntityDescription, role: String) throws(StoreChainError) {
        for name in node.attributes.keys where entity.attribute(named: name) == nil {
            throw failure(
                "\(role): entity '\(entity.name)' has no attribute '\(name)'",
                Suggestion.didYouMean(name, in: entity.attributes.map(\.name)))
        }
        for attribute in entity.attributes {
            var value = node.attributes[attribute.name] ?? .null
            if value.isNull, let defaultValue = attribute.defaultValue { value = defaultValue }
            try check(value, against: attribute, role: role)
            node.attributes[attribute.name] = value.isNull ? Value?.none : value
        }
    }

    /// Sets the relationships `change` gives and updates their inverses on the other side.
    private func setRelationships(
        of change: Node, entity: EntityDescription, in dataset: inout Dataset, role: String,
        modified: inout Set<ObjectID>
    ) throws(StoreChainError) {
        guard var node = dataset.node(for: change.id) else { return }
        for relationship in entity.relationships {
            let given = change.relationships[relationship.name]
            if given == nil && node.relationships[relationship.name] != nil { continue }
            let value = given ?? (relationship.isToMany ? .toMany([]) : .toOne(nil))
            let old = node.relationships[relationship.name]?.objectIDs ?? []
            for target in value.objectIDs
            where dataset.node(for: target) == nil || target.entity != relationship.destination {
                throw failure("\(role): relationship '\(relationship.name)' refers to \(target), which does not exist")
            }
            node.relationships[relationship.name] = value
            dataset.upsert(node)
            guard let inverse = relationship.inverse else { continue }
            for target in old where !value.objectIDs.contains(target) {
                try unlink(change.id, from: target, inverse: inverse, in: &dataset, modified: &modified)
            }
            for target in value.objectIDs where !old.contains(target) {
                try link(change.id, to: target, inverse: inverse, in: &dataset, modified: &modified)
            }
            node = dataset.node(for: change.id) ?? node
        }
    }

    private func link(
        _ id: ObjectID, to target: ObjectID, inverse: String, in dataset: inout Dataset, modified: inout Set<ObjectID>
    ) throws(StoreChainError) {
        guard var other = dataset.node(for: target),
            let relationship = model.entity(named: target.entity)?.relationship(named: inverse)
        else { return }
        if relationship.isToMany {
            var ids = other.relationships[inverse]?.objectIDs ?? []
            if !ids.contains(id) { ids.append(id) }
            other.relationships[inverse] = .toMany(ids)
        } else {
            if case .toOne(let previous?) = other.relationships[inverse], previous != id {
                // The target moves from its previous owner to this one.
                guard let previousOwner = dataset.node(for: previous),
                    let forward = model.entity(named: previous.entity)?.relationships.first(where: {
                        $0.inverse == inverse && $0.destination == target.entity
                    })
                else { return }
                var owner = previousOwner
                owner.relationships[forward.name] = .toMany(
                    (owner.relationships[forward.name]?.objectIDs ?? []).filter { $0 != target })
                dataset.upsert(owner)
                modified.insert(previous)
            }
            other.relationships[inverse] = .toOne(id)
        }
        dataset.upsert(other)
        modified.insert(target)
    }

    private func unlink(
        _ id: ObjectID, from target: ObjectID, inverse: String?, in dataset: inout Dataset,
        modified: inout Set<ObjectID>
    ) throws(StoreChainError) {
        guard let inverse, var other = dataset.node(for: target) else { return }
        switch other.relationships[inverse] {
        case .toMany(let ids)?: other.relationships[inverse] = .toMany(ids.filter { $0 != id })
        case .toOne(id)?: other.relationships[inverse] = .toOne(nil)
        default: return
        }
        dataset.upsert(other)
        modified.insert(target)
    }

    /// Required to-one relationships of every touched object must be set after the save.
    private func checkRequired(_ ids: Set<ObjectID>, in dataset: Dataset) throws(StoreChainError) {
        var all = ids
        for id in ids {
            for target in dataset.node(for: id)?.relationships.values.flatMap(\.objectIDs) ?? [] { all.insert(target) }
        }
        for id in all.sorted(by: { $0.description < $1.description }) {
            guard let node = dataset.node(for: id), let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isOptional {
                if case .toOne(nil) = node.relationships[relationship.name] ?? .toOne(nil) {
                    throw failure(
                        "\(id): required relationship '\(relationship.name)' would be empty",
                        "set it to a \(relationship.destination), or delete the object too")
                }
            }
        }
    }
}
