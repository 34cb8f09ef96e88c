/// Turns records in JSON (`{"Band": [{…}, …], "Album": [{…}, …]}`) into nodes, checking each
/// value against the model.
///
/// To-one relationships are given as the destination's key, to-many as an array of keys. A
/// relationship given on one side only is filled in on its inverse; given on both sides, the two
/// must agree. Every error names the JSON path (`$.Album[3].band`) and what to do.
public struct RecordLoader {
    public let model: Model
    /// Names the input (a file path) in errors.
    public var source: String?

    public init(model: Model, source: String? = nil) {
        self.model = model
        self.source = source
    }

    /// Reads every record in `root` into a dataset.
    public func load(_ root: JSONValue) throws(StoreChainError) -> Dataset {
        guard case .object(let collections) = root else {
            throw error(
                "$", "the top level is a \(root.typeName), not an object of entity names",
                "write {\"EntityName\": [records…], …}")
        }
        var nodes: [ObjectID: Node] = [:]
        var order: [ObjectID] = []
        var explicit: [ObjectID: Set<String>] = [:]
        var paths: [ObjectID: String] = [:]
        for entityName in collections.keys.sorted() {
            guard let entity = model.entity(named: entityName) else {
                throw error(
                    "$.\(entityName)", "unknown entity '\(entityName)'",
                    Suggestion.didYouMean(entityName, in: model.entities.map(\.name)))
            }
            guard case .array(let records) = collections[entityName] ?? .null else {
                throw error(
                    "$.\(entityName)",
                    "expected an array of records, found \(collections[entityName]?.typeName ?? "nothing")")
            }
            for (index, record) in records.enumerated() {
                let path = "$.\(entityName)[\(index)]"
                let (node, given) = try readRecord(record, entity: entity, path: path)
                if let earlier = paths[node.id] {
                    throw error(
                        "\(path).\(entity.key)", "\(node.id) appears twice (first at \(earlier))",
                        "keys must be unique within an entity")
                }
                nodes[node.id] = node
                order.append(node.id)
                explicit[node.id] = given
                paths[node.id] = path
            }
        }
        try checkReferences(nodes, order: order, paths: paths)
        try fillInverses(&nodes, order: order, explicit: explicit, paths: paths)
        try checkRequiredRelationships(nodes, order: order, paths: paths)
        return Dataset(order.compactMap { nodes[$0] })
    }

    private func error(_ path: String, _ message: String, _ suggestion: String? = nil) -> StoreChainError {
        StoreChainError(.invalidData, message, at: .init(file: source, path: path), suggestion: suggestion)
    }

    private func readRecord(_ record: JSONValue, entity: Entity, path: String) throws(StoreChainError)
        -> (Node, Set<String>)
    {
        guard case .object(let fields) = record else {
            throw error(path, "expected a record object, found \(record.typeName)")
        }
        for name in fields.keys.sorted()
        where entity.attribute(named: name) == nil && entity.relationship(named: name) == nil {
            throw error(
                "\(path).\(name)", "entity '\(entity.name)' has no attribute or relationship '\(name)'",
                Suggestion.didYouMean(name, in: entity.propertyNames))
        }
        var attributes: [String: Value] = [:]
        for attribute in entity.attributes {
            var value: Value
            do {
                value = try Value.coerce(fields[attribute.name] ?? .null, to: attribute.type)
            } catch {
                throw error.located(.init(file: source, path: "\(path).\(attribute.name)"))
            }
            if value.isNull, let defaultValue = attribute.defaultValue { value = defaultValue }
            if value.isNull && !attribute.isOptional {
                throw error(
                    "\(path).\(attribute.name)", "required attribute '\(attribute.name)' is missing",
                    "give it a value, or mark it optional with '?' in the model")
            }
            if !value.isNull { attributes[attribute.name] = value }
        }
        guard let key = attributes[entity.key] else {
            throw error("\(path).\(entity.key)", "the record has no key '\(entity.key)'")
        }
        let id = ObjectID(entity: entity.name, key: key)
        var relationships: [String: RelationshipValue] = [:]
        var given: Set<String> = []
        for relationship in entity.relationships {
            guard let field = fields[relationship.name] else { continue }
            given.insert(relationship.name)
            relationships[relationship.name] = try readRelationship(
                field, relationship, path: "\(path).\(relationship.name)")
        }
        return (Node(id: id, attributes: attributes, relationships: relationships), given)
    }

    private func readRelationship(_ field: JSONValue, _ relationship: Relationship, path: String)
        throws(StoreChainError) -> RelationshipValue
    {
        guard let destination = model.entity(named: relationship.destination),
            let keyType = destination.keyAttribute?.type
        else { throw error(path, "relationship '\(relationship.name)' leads to an unknown entity") }
        func reference(_ json: JSONValue, at path: String) throws(StoreChainError) -> ObjectID {
            if case .object = json {
                throw error(
                    path, "expected the key of a \(destination.name), found an object",
                    "give the \(destination.name)'s '\(destination.key)' value only")
            }
            do {
                return ObjectID(entity: destination.name, key: try Value.coerce(json, to: keyType))
            } catch {
                throw error.located(.init(file: source, path: path))
            }
        }
        if relationship.isToMany {
            if case .null = field { return .toMany([]) }
            guard case .array(let elements) = field else {
                throw error(path, "expected an array of \(destination.name) keys, found \(field.typeName)")
            }
            var ids: [ObjectID] = []
            for (index, element) in elements.enumerated() {
                let id = try reference(element, at: "\(path)[\(index)]")
                if ids.contains(id) { throw error("\(path)[\(index)]", "\(id) is listed twice") }
                ids.append(id)
            }
            return .toMany(ids)
        }
        if case .null = field { return .toOne(nil) }
        return .toOne(try reference(field, at: path))
    }

    private func checkReferences(_ nodes: [ObjectID: Node], order: [ObjectID], paths: [ObjectID: String])
        throws(StoreChainError)
    {
        for id in order {
            guard let node = nodes[id] else { continue }
            for name in node.relationships.keys.sorted() {
                for target in node.relationships[name]?.objectIDs ?? [] where nodes[target] == nil {
                    throw error(
                        "\(paths[id] ?? "$").\(name)", "\(id) refers to \(target), which is not in the data",
                        "add a \(target.entity) record with that key, or remove the reference")
                }
            }
        }
    }

    /// Sets each relationship that a record left out from its inverse's values, and checks that
    /// both sides agree where a record gave both.
    private func fillInverses(
        _ nodes: inout [ObjectID: Node], order: [ObjectID], explicit: [ObjectID: Set<String>],
        paths: [ObjectID: String]
    ) throws(StoreChainError) {
        let derived = InverseIndex(order.compactMap { nodes[$0] }, model: model)
        for id in order {
            guard var node = nodes[id], let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships where relationship.inverse != nil {
                let owners = derived.owners(of: id, through: relationship.name)
                let path = "\(paths[id] ?? "$").\(relationship.name)"
                if !relationship.isToMany && owners.count > 1 {
                    throw error(
                        path,
                        "\(id) is claimed by \(owners.count) objects through '\(relationship.inverse ?? "")': \(owners.map(\.description).joined(separator: ", "))",
                        "a to-one relationship holds one object; list it under one owner only")
                }
                if explicit[id]?.contains(relationship.name) == true {
                    // Each side's own list is checked against the pointers from the other side,
                    // so checking containment here, for every node, checks both directions.
                    let given = node.relationships[relationship.name]?.objectIDs ?? []
                    if let stray = owners.first(where: { !given.contains($0) }) {
                        throw error(
                            path,
                            "\(stray) says it belongs to \(id) through '\(relationship.inverse ?? "")', but \(id).\(relationship.name) does not list it",
                            "make both sides agree, or give the relationship on one side only")
                    }
                    continue
                }
                node.relationships[relationship.name] =
                    relationship.isToMany ? .toMany(owners) : .toOne(owners.first)
            }
            for relationship in entity.relationships where node.relationships[relationship.name] == nil {
                node.relationships[relationship.name] = relationship.isToMany ? .toMany([]) : .toOne(nil)
            }
            nodes[id] = node
        }
    }

    private func checkRequiredRelationships(_ nodes: [ObjectID: Node], order: [ObjectID], paths: [ObjectID: String])
        throws(StoreChainError)
    {
        for id in order {
            guard let node = nodes[id], let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isOptional {
                if case .toOne(nil) = node.relationships[relationship.name] ?? .toOne(nil) {
                    throw error(
                        "\(paths[id] ?? "$").\(relationship.name)",
                        "required relationship '\(relationship.name)' of \(id) is missing",
                        "give the \(relationship.destination)'s key, or mark it optional with '?' in the model")
                }
            }
        }
    }
}
