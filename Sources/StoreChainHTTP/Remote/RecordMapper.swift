import Foundation
import StoreChain

/// Maps a backend's JSON records to nodes and nodes back to JSON bodies, following an entity's
/// `RemoteEntityOptions`. Errors name the URL, the JSON path and the field.
struct RecordMapper: Sendable {
    let model: ObjectModel
    let entities: [String: RemoteEntityOptions]
    /// Where a response's included records are, if the backend sends them.
    var included: IncludedResources? = nil
    /// The backend's base URL, against which links to objects are read.
    var baseURL: URL? = nil
    /// Each entity's get endpoint, parsed once: links to its objects are read and written with it.
    var getTemplates: [String: RequestTemplate] = [:]

    func options(for entity: String) -> RemoteEntityOptions {
        entities[entity] ?? RemoteEntityOptions()
    }

    /// The foreign key at `field`: `.null` where the path runs into an explicit null on the way
    /// (JSON:API's `"data": null` linkage of an empty to-one), nil where the record lacks it.
    static func foreignKey(at field: String, in record: JSONValue) -> JSONValue? {
        if let value = JSONPath.value(at: field, in: record) { return value }
        var prefix = Substring(field)
        while let dot = prefix.lastIndex(of: ".") {
            prefix = prefix[..<dot]
            if case .null? = JSONPath.value(at: String(prefix), in: record) { return .null }
        }
        return nil
    }

    /// The records in a response body: at `path` (or the body itself), an array or one object.
    func records(in body: JSONValue, at path: String?, source: String) throws(StoreChainError) -> [JSONValue] {
        let container = path.map { JSONPath.value(at: $0, in: body) } ?? body
        switch container {
        case .array(let records)?: return records
        case .object?: return [container ?? .null]
        case .null?: return []
        default:
            throw StoreChainError(
                .badRecord,
                "expected an array of records at '\(path ?? "$")', found \(container?.typeName ?? "nothing")",
                at: .init(path: source), suggestion: "check the entity's 'records' path against the response")
        }
    }

    /// One record as a node, plus the nodes embedded in it.
    func node(from record: JSONValue, entity: EntityDescription, jsonPath: String, source: String)
        throws(StoreChainError)
        -> (node: Node, embedded: [Node])
    {
        let options = options(for: entity.name)
        func fail(_ field: String, _ message: String, _ suggestion: String? = nil) -> StoreChainError {
            StoreChainError(
                .badRecord, message, at: .init(path: "\(source) \(jsonPath).\(field)"), suggestion: suggestion)
        }
        guard case .object = record else {
            throw StoreChainError(
                .badRecord, "expected a record object, found \(record.typeName)",
                at: .init(path: "\(source) \(jsonPath)"))
        }
        let attributes = try entity.attributeValues { attribute throws(StoreChainError) -> Value? in
            let field =
                attribute.name == entity.key
                ? (options.key ?? options.attributes[attribute.name] ?? attribute.name)
                : (options.attributes[attribute.name] ?? attribute.name)
            let json = JSONPath.value(at: field, in: record) ?? .null
            let value: Value
            do throws(StoreChainError) {
                value = try Value.coerce(json, to: attribute.type)
            } catch {
                throw fail(field, "field '\(field)' of \(entity.name): \(error.message)", error.suggestion)
            }
            guard value.isNull else { return value }
            if attribute.defaultValue == nil && !attribute.isOptional {
                throw fail(
                    field, "required field '\(field)' (attribute '\(entity.name).\(attribute.name)') is missing",
                    "map the attribute to the field that holds it, or mark it optional in the model")
            }
            return attribute.defaultValue
        }
        guard let key = attributes[entity.key] else { throw fail(entity.key, "the record has no key") }
        var relationships: [String: RelationshipValue] = [:]
        var embedded: [Node] = []
        for relationship in entity.relationships {
            guard let mapping = options.relationships[relationship.name],
                let destination = model.entity(named: relationship.destination),
                let keyType = destination.keyAttribute?.type
            else { continue }
            switch mapping {
            case .endpoint: continue
            case .foreignKey(let field), .link(let field):
                // Left out: not known, unless the records leave out nulls.
                guard
                    let json = Self.foreignKey(at: field, in: record)
                        ?? (options.omitsNulls ? (relationship.isToMany ? .array([]) : .null) : nil)
                else { continue }
                let linked = if case .link = mapping { true } else { false }
                func reference(_ json: JSONValue) throws(StoreChainError) -> ObjectID? {
                    do {
                        var key = json
                        if linked, case .string(let link) = json { key = try self.key(in: link, of: destination) }
                        let value = try Value.coerce(key, to: keyType)
                        return value.isNull ? nil : ObjectID(entity: destination.name, key: value)
                    } catch {
                        throw fail(
                            field, "\(linked ? "link" : "foreign key") '\(field)': \(error.message)", error.suggestion)
                    }
                }
                if relationship.isToMany {
                    guard case .array(let elements) = json else {
                        throw fail(field, "foreign keys '\(field)' should be an array, found \(json.typeName)")
                    }
                    var ids: [ObjectID] = []
                    for element in elements { if let id = try reference(element) { ids.append(id) } }
                    relationships[relationship.name] = .toMany(ids)
                } else {
                    relationships[relationship.name] = .toOne(try reference(json))
                }
            case .embedded(let field):
                guard let json = JSONPath.value(at: field, in: record) ?? (options.omitsNulls ? .null : nil) else {
                    continue
                }
                let nested: [JSONValue] =
                    switch json {
                    case .array(let elements): elements
                    case .null: []
                    default: [json]
                    }
                var ids: [ObjectID] = []
                for (index, element) in nested.enumerated() {
                    let path = relationship.isToMany ? "\(jsonPath).\(field)[\(index)]" : "\(jsonPath).\(field)"
                    let (child, grandchildren) = try node(
                        from: element, entity: destination, jsonPath: path, source: source)
                    ids.append(child.id)
                    embedded.append(child)
                    embedded += grandchildren
                }
                relationships[relationship.name] = relationship.isToMany ? .toMany(ids) : .toOne(ids.first)
            }
        }
        var version: String?
        if let field = options.version {
            switch JSONPath.value(at: field, in: record) {
            case .string(let text)?: version = text
            case .integer(let number)?: version = String(number)
            case nil, .null?: version = nil
            case let other?:
                throw fail(field, "version field '\(field)' should be a string or an integer, found \(other.typeName)")
            }
        }
        return (
            Node(
                id: ObjectID(entity: entity.name, key: key), attributes: attributes, relationships: relationships,
                version: version),
            embedded
        )
    }

    /// The JSON body for creating or updating `node`: its attributes (all for a create, the
    /// changed ones for an update) and its foreign keys, at their remote paths.
    func body(for node: Node, entity: EntityDescription, permanentIDs: [ObjectID: ObjectID], includeKey: Bool)
        -> JSONValue
    {
        let options = options(for: entity.name)
        var body = JSONValue.object([:])
        for (name, value) in node.attributes.sorted(by: { $0.key < $1.key }) {
            guard let attribute = entity.attribute(named: name) else { continue }
            if name == entity.key && !includeKey { continue }
            let field =
                name == entity.key
                ? (options.key ?? options.attributes[name] ?? name) : (options.attributes[name] ?? name)
            var json = value.jsonValue
            if case .date(let date) = value, options.dateFormat == .epochSeconds {
                json =
                    date.timeIntervalSince1970.rounded() == date.timeIntervalSince1970
                    ? .integer(Int(date.timeIntervalSince1970)) : .double(date.timeIntervalSince1970)
            }
            _ = attribute
            JSONPath.set(json, at: field, in: &body)
        }
        for (name, value) in node.relationships.sorted(by: { $0.key < $1.key }) {
            let ids = value.objectIDs.map { permanentIDs[$0] ?? $0 }
            let written: [JSONValue]
            let field: String
            switch options.relationships[name] {
            case .foreignKey(let name)?:
                field = name
                written = ids.compactMap { $0.key?.jsonValue }
            case .link(let name)?:
                field = name
                written = ids.compactMap { link(to: $0).map(JSONValue.string) }
            default: continue
            }
            switch value {
            case .toOne: JSONPath.set(written.first ?? .null, at: field, in: &body)
            case .toMany: JSONPath.set(.array(written), at: field, in: &body)
            }
        }
        return body
    }

    /// The key in a link to an object of `entity`: the value of the path variable of its get
    /// endpoint, as JSON text (coerced to the key's type by the caller).
    private func key(in link: String, of entity: EntityDescription) throws(StoreChainError) -> JSONValue {
        guard let template = getTemplates[entity.name], template.pathVariables.count == 1, let baseURL else {
            throw StoreChainError(
                .badRecord, "'\(link)' links to a \(entity.name), which has no get endpoint to read its key from",
                suggestion:
                    "declare \(entity.name)'s get endpoint as the backend writes its links (GET /\(entity.name.lowercased())s/{id}/)"
            )
        }
        guard let url = URL(string: link, relativeTo: baseURL),
            let values = template.pathValues(of: url, base: baseURL),
            let key = values[template.pathVariables[0]]
        else {
            throw StoreChainError(
                .badRecord,
                "'\(link)' is not a link to a \(entity.name): it does not match '\(template)' under \(baseURL)",
                suggestion:
                    "write \(entity.name)'s get endpoint as the backend writes its links, or map the field as a foreign-key"
            )
        }
        return .string(key)
    }

    /// The link to an object: the URL of its get endpoint (which validation requires of a
    /// linked destination); nil for an object without a key.
    private func link(to id: ObjectID) -> String? {
        guard let key = id.key, let baseURL, let template = getTemplates[id.entity],
            let variable = template.pathVariables.first
        else { return nil }
        return (try? template.url(base: baseURL, values: [variable: QueryPlanner.parameterText(key)]))?.absoluteString
    }
}
