/// Turns records in JSON (`{"Band": [{…}, …], "Album": [{…}, …]}`) into nodes, checking each
/// value against the model.
///
/// To-one relationships are given as the destination's key, to-many as an array of keys. A
/// relationship given on one side only is filled in on its inverse; given on both sides, the two
/// must agree. Every error names the JSON path (`$.Album[3].band`) and what to do.
package struct RecordLoader {
    package let model: ObjectModel
    /// Names the input (a file path) in errors.
    package var source: String?

    package init(model: ObjectModel, source: String? = nil) {
        self.model = model
        self.source = source
    }

    /// Reads every record in `root` into a dataset.
    package func load(_ root: JSONValue) throws(StoreChainError) -> Dataset {
        guard case .object(let collections) = root else {
            return try load { visit throws(StoreChainError) in try visit(.document(root)) }
        }
        return try load { visit throws(StoreChainError) in
            for name in collections.keys.sorted() {
                guard case .array(let records) = collections[name] ?? .null else {
                    try visit(.member(name, collections[name] ?? .null))
                    continue
                }
                try visit(.collection(name))
                for (index, record) in records.enumerated() { try visit(.element(record, index: index)) }
            }
        }
    }

    /// Reads the records of a JSON document (a data file's bytes) one at a time, without holding
    /// the document's tree: memory for the nodes, not for the nodes and the JSON beside them.
    ///
    /// - Throws: `StoreChainError` for malformed JSON (byte offset, line and column) or a record
    ///   that does not fit the model (JSON path).
    package func load(json bytes: some Collection<UInt8>) throws(StoreChainError) -> Dataset {
        try load { visit throws(StoreChainError) in
            try JSONParser().parseCollections(bytes, source: source, visit)
        }
    }

    /// Reads the records that `events` hands over, then checks and completes their relationships.
    private func load(
        _ events: ((JSONParser.CollectionsEvent) throws(StoreChainError) -> Void) throws(StoreChainError) -> Void
    ) throws(StoreChainError) -> Dataset {
        var dataset = Dataset()
        var entityNames: [String] = []
        // The relationships each record gave, for the records that gave any.
        var explicit: [ObjectID: Set<String>] = [:]
        var entity: EntityDescription?
        try events { event throws(StoreChainError) in
            switch event {
            case .document(let root):
                throw error(
                    "$", "the top level is a \(root.typeName), not an object of entity names",
                    "write {\"EntityName\": [records…], …}")
            case .member(let name, let value):
                _ = try self.entity(named: name)
                throw error("$.\(name)", "expected an array of records, found \(value.typeName)")
            case .collection(let name):
                entity = try self.entity(named: name)
                entityNames.append(name)
            case .element(let record, let index):
                guard let entity else { return }
                let path = "$.\(entity.name)[\(index)]"
                let (node, given) = try readRecord(record, entity: entity, path: path)
                if dataset.node(for: node.id) != nil {
                    throw error(
                        "\(path).\(entity.key)",
                        "\(node.id) appears twice (first at \(self.path(of: node.id, in: dataset)))",
                        "keys must be unique within an entity")
                }
                dataset.upsert(node)
                if !given.isEmpty { explicit[node.id] = given }
            }
        }
        // Checked entity by entity in name order, so the first error reported does not depend on
        // the order of the file's members. Only objects whose entity has relationships have
        // anything to check or fill (a list of every ID was a tenth of a large file's peak).
        let order = entityNames.sorted().filter { model.entity(named: $0)?.relationships.isEmpty == false }
            .flatMap { dataset.ids(of: $0) }
        try checkReferences(dataset, order: order)
        try fillInverses(&dataset, order: order, explicit: explicit)
        try checkRequiredRelationships(dataset, order: order)
        return dataset
    }

    /// The JSON path of a loaded record (`$.Band[3]`): its place in its entity's array. Found
    /// by a search, as it is only needed for an error.
    private func path(of id: ObjectID, in dataset: Dataset) -> String {
        "$.\(id.entity)[\(dataset.ids(of: id.entity).firstIndex(of: id) ?? 0)]"
    }

    private func entity(named name: String) throws(StoreChainError) -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw error(
                "$.\(name)", "unknown entity '\(name)'", Suggestion.didYouMean(name, in: model.entities.map(\.name)))
        }
        return entity
    }

    private func error(_ path: String, _ message: String, _ suggestion: String? = nil) -> StoreChainError {
        StoreChainError(.invalidData, message, at: .init(file: source, path: path), suggestion: suggestion)
    }

    /// Reads the changes a save makes to one object (`--insert` or `--update` JSON): the fields
    /// given, each checked against the model (attributes by type, relationships as the
    /// destination's keys); fields left out are left out, and `null` clears a value.
    ///
    /// - Throws: `invalid-data` naming the JSON path (`$.name`) of a field that does not fit.
    package func readChanges(_ record: JSONValue, of id: ObjectID, path: String = "$") throws(StoreChainError) -> Node {
        guard let entity = model.entity(named: id.entity) else {
            throw StoreChainError(
                .invalidRequest, "unknown entity '\(id.entity)'",
                suggestion: Suggestion.didYouMean(id.entity, in: model.entities.map(\.name)))
        }
        let fields = try readFields(record, entity: entity, path: path)
        var attributes: [String: Value] = [:]
        for attribute in entity.attributes {
            guard let field = fields[attribute.name] else { continue }
            attributes[attribute.name] = try readAttribute(field, attribute, path: "\(path).\(attribute.name)")
        }
        var relationships: [String: RelationshipValue] = [:]
        for relationship in entity.relationships {
            guard let field = fields[relationship.name] else { continue }
            relationships[relationship.name] = try readRelationship(
                field, relationship, path: "\(path).\(relationship.name)")
        }
        return Node(id: id, attributes: AttributeValues(attributes), relationships: relationships)
    }

    /// The fields of a record object, every name one the entity has.
    private func readFields(_ record: JSONValue, entity: EntityDescription, path: String) throws(StoreChainError)
        -> [String: JSONValue]
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
        return fields
    }

    private func readAttribute(_ field: JSONValue, _ attribute: AttributeDescription, path: String)
        throws(StoreChainError)
        -> Value
    {
        do throws(StoreChainError) {
            return try Value.coerce(field, to: attribute.type)
        } catch {
            throw error.located(.init(file: source, path: path))
        }
    }

    private func readRecord(_ record: JSONValue, entity: EntityDescription, path: String) throws(StoreChainError)
        -> (Node, Set<String>)
    {
        let fields = try readFields(record, entity: entity, path: path)
        let attributes = try entity.attributeValues { attribute throws(StoreChainError) -> Value? in
            var value = try readAttribute(fields[attribute.name] ?? .null, attribute, path: "\(path).\(attribute.name)")
            if value.isNull, let defaultValue = attribute.defaultValue { value = defaultValue }
            if value.isNull && !attribute.isOptional {
                throw error(
                    "\(path).\(attribute.name)", "required attribute '\(attribute.name)' is missing",
                    "give it a value, or mark it optional with '?' in the model")
            }
            return value.isNull ? Value?.none : value
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

    private func readRelationship(_ field: JSONValue, _ relationship: RelationshipDescription, path: String)
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

    private func checkReferences(_ dataset: Dataset, order: [ObjectID]) throws(StoreChainError) {
        for id in order {
            guard let node = dataset.node(for: id) else { continue }
            for name in node.relationships.keys.sorted() {
                for target in node.relationships[name]?.objectIDs ?? [] where dataset.node(for: target) == nil {
                    throw error(
                        "\(path(of: id, in: dataset)).\(name)", "\(id) refers to \(target), which is not in the data",
                        "add a \(target.entity) record with that key, or remove the reference")
                }
            }
        }
    }

    /// Sets each relationship that a record left out from its inverse's values, and checks that
    /// both sides agree where a record gave both.
    private func fillInverses(
        _ dataset: inout Dataset, order: [ObjectID], explicit: [ObjectID: Set<String>]
    ) throws(StoreChainError) {
        let derived: InverseIndex
        do {
            // A copy that ends here, before the upserts below (which would otherwise copy the
            // whole dataset).
            let loaded = dataset
            derived = InverseIndex(order.lazy.compactMap { loaded.node(for: $0) }, model: model)
        }
        for id in order {
            guard var node = dataset.node(for: id), let entity = model.entity(named: id.entity),
                !entity.relationships.isEmpty
            else { continue }
            for relationship in entity.relationships where relationship.inverse != nil {
                let owners = derived.owners(of: id, through: relationship.name)
                if !relationship.isToMany && owners.count > 1 {
                    throw error(
                        "\(path(of: id, in: dataset)).\(relationship.name)",
                        "\(id) is claimed by \(owners.count) objects through '\(relationship.inverse ?? "")': \(owners.map(\.description).joined(separator: ", "))",
                        "a to-one relationship holds one object; list it under one owner only")
                }
                if explicit[id]?.contains(relationship.name) == true {
                    // Each side's own list is checked against the pointers from the other side,
                    // so checking containment here, for every node, checks both directions.
                    let given = node.relationships[relationship.name]?.objectIDs ?? []
                    if let stray = owners.first(where: { !given.contains($0) }) {
                        throw error(
                            "\(path(of: id, in: dataset)).\(relationship.name)",
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
            dataset.upsert(node)
        }
    }

    private func checkRequiredRelationships(_ dataset: Dataset, order: [ObjectID]) throws(StoreChainError) {
        for id in order {
            guard let node = dataset.node(for: id), let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isOptional {
                if case .toOne(nil) = node.relationships[relationship.name] ?? .toOne(nil) {
                    throw error(
                        "\(path(of: id, in: dataset)).\(relationship.name)",
                        "required relationship '\(relationship.name)' of \(id) is missing",
                        "give the \(relationship.destination)'s key, or mark it optional with '?' in the model")
                }
            }
        }
    }
}
