import StoreChain
import Yams

/// Walks a model document, collecting entities and every problem, and remembering where each
/// key path is so errors found later (by the model's own rules) get a line number too.
struct ModelFileReader {
    let document: YAMLDocument
    private(set) var problems: [StoreChainError] = []
    private var marks: [String: Yams.Node] = [:]

    init(document: YAMLDocument) {
        self.document = document
    }

    /// Adds file, line and column to an error that names a key path in this file.
    func locate(_ error: StoreChainError) -> StoreChainError {
        var path = error.location?.path ?? ""
        while !path.isEmpty, marks[path] == nil {
            path = path.split(separator: ".").dropLast().joined(separator: ".")
        }
        return error.located(document.location(marks[path], error.location?.path ?? ""))
    }

    private mutating func report(_ node: Yams.Node?, _ path: String, _ message: String, _ suggestion: String? = nil) {
        problems.append(document.problem(node, path, message, suggestion))
    }

    private mutating func pairs(_ node: Yams.Node, _ path: String) -> [(
        key: String, keyNode: Yams.Node, value: Yams.Node
    )] {
        let result = document.pairs(node, path, problems: &problems) ?? []
        for pair in result { marks[document.join(path, pair.key)] = pair.value }
        return result
    }

    private mutating func checkKeys(
        _ pairs: [(key: String, keyNode: Yams.Node, value: Yams.Node)], _ path: String, allowed: [String]
    ) {
        for pair in pairs where !allowed.contains(pair.key) {
            report(
                pair.keyNode, document.join(path, pair.key), "unknown key '\(pair.key)'",
                Suggestion.didYouMean(pair.key, in: allowed))
        }
    }

    mutating func readEntities() -> [EntityDescription] {
        guard let root = document.root else {
            report(nil, "", "the model file is empty", "add an 'entities:' mapping")
            return []
        }
        let top = pairs(root, "")
        checkKeys(top, "", allowed: ["entities"])
        guard let entitiesNode = top.first(where: { $0.key == "entities" })?.value else {
            if problems.isEmpty {
                report(root, "entities", "the model file has no 'entities'", "add an 'entities:' mapping")
            }
            return []
        }
        return pairs(entitiesNode, "entities").compactMap { pair in
            readEntity(pair.key, pair.value, path: "entities.\(pair.key)")
        }
    }

    private mutating func readEntity(_ name: String, _ node: Yams.Node, path: String) -> EntityDescription? {
        let fields = pairs(node, path)
        checkKeys(fields, path, allowed: ["key", "attributes", "relationships"])
        var attributes: [AttributeDescription] = []
        if let attributesNode = fields.first(where: { $0.key == "attributes" })?.value {
            for pair in pairs(attributesNode, "\(path).attributes") {
                if let attribute = readAttribute(pair.key, pair.value, path: "\(path).attributes.\(pair.key)") {
                    attributes.append(attribute)
                }
            }
        } else {
            report(node, "\(path).attributes", "entity '\(name)' has no attributes", "add at least its key attribute")
        }
        var relationships: [RelationshipDescription] = []
        if let relationshipsNode = fields.first(where: { $0.key == "relationships" })?.value {
            for pair in pairs(relationshipsNode, "\(path).relationships") {
                if let relationship = readRelationship(pair.key, pair.value, path: "\(path).relationships.\(pair.key)")
                {
                    relationships.append(relationship)
                }
            }
        }
        var key = "id"
        if let keyNode = fields.first(where: { $0.key == "key" })?.value {
            key = document.string(keyNode, "\(path).key", problems: &problems) ?? key
        } else if attributes.first(where: { $0.name == "id" }) == nil {
            report(
                node, "\(path).key", "entity '\(name)' names no key and has no 'id' attribute",
                "add 'key: <attribute>' naming the backend's identifier")
        }
        return EntityDescription(name, key: key, attributes: attributes, relationships: relationships)
    }

    /// `integer`, `date?`, or `{ type: double, optional: true, default: 1.5 }`.
    private mutating func readAttribute(_ name: String, _ node: Yams.Node, path: String) -> AttributeDescription? {
        var typeNode = node
        var optional = false
        var defaultNode: Yams.Node?
        if case .mapping = node {
            let fields = pairs(node, path)
            checkKeys(fields, path, allowed: ["type", "optional", "default"])
            guard let found = fields.first(where: { $0.key == "type" })?.value else {
                report(
                    node, "\(path).type", "attribute '\(name)' has no type",
                    "add 'type:' with one of: \(AttributeType.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            typeNode = found
            if let optionalNode = fields.first(where: { $0.key == "optional" })?.value {
                guard case .bool(let flag)? = document.json(optionalNode) else {
                    report(optionalNode, "\(path).optional", "'optional' must be true or false")
                    return nil
                }
                optional = flag
            }
            defaultNode = fields.first(where: { $0.key == "default" })?.value
        }
        guard var typeName = document.string(typeNode, "\(path).type", problems: &problems) else { return nil }
        if typeName.hasSuffix("?") {
            optional = true
            typeName.removeLast()
        }
        guard let type = AttributeType(rawValue: typeName) else {
            report(
                typeNode, path, "unknown attribute type '\(typeName)'",
                Suggestion.didYouMean(typeName, in: AttributeType.allCases.map(\.rawValue)))
            return nil
        }
        var defaultValue: Value?
        if let defaultNode {
            do {
                defaultValue = try Value.coerce(document.json(defaultNode) ?? .null, to: type)
            } catch {
                problems.append(error.located(document.location(defaultNode, "\(path).default")))
                return nil
            }
        }
        return AttributeDescription(name, type, optional: optional, default: defaultValue)
    }

    /// `{ to-one: Band, inverse: albums }`, `{ to-many: Track, inverse: album, ordered: true }`,
    /// `{ to-many: Track, inverse: album, delete: cascade }`.
    private mutating func readRelationship(_ name: String, _ node: Yams.Node, path: String) -> RelationshipDescription?
    {
        let fields = pairs(node, path)
        guard case .mapping = node else { return nil }
        checkKeys(fields, path, allowed: ["to-one", "to-many", "inverse", "ordered", "delete"])
        let toOne = fields.first { $0.key == "to-one" }
        let toMany = fields.first { $0.key == "to-many" }
        guard (toOne == nil) != (toMany == nil), let kindPair = toOne ?? toMany else {
            report(
                node, path, "relationship '\(name)' must have exactly one of 'to-one' or 'to-many'",
                "write { to-one: Entity } or { to-many: Entity }")
            return nil
        }
        guard var destination = document.string(kindPair.value, "\(path).\(kindPair.key)", problems: &problems) else {
            return nil
        }
        var optional = false
        if destination.hasSuffix("?") {
            optional = true
            destination.removeLast()
        }
        if optional && toMany != nil {
            report(
                kindPair.value, "\(path).to-many", "a to-many relationship cannot be optional ('?')",
                "an empty list already means none")
            return nil
        }
        var ordered = false
        if let orderedNode = fields.first(where: { $0.key == "ordered" })?.value {
            guard case .bool(let flag)? = document.json(orderedNode) else {
                report(orderedNode, "\(path).ordered", "'ordered' must be true or false")
                return nil
            }
            guard toMany != nil else {
                report(orderedNode, "\(path).ordered", "only to-many relationships can be ordered")
                return nil
            }
            ordered = flag
        }
        var inverse: String?
        if let inverseNode = fields.first(where: { $0.key == "inverse" })?.value {
            inverse = document.string(inverseNode, "\(path).inverse", problems: &problems)
        }
        var deleteRule = RelationshipDescription.DeleteRule.nullify
        if let ruleNode = fields.first(where: { $0.key == "delete" })?.value {
            guard let text = document.string(ruleNode, "\(path).delete", problems: &problems) else { return nil }
            guard let rule = RelationshipDescription.DeleteRule(rawValue: text) else {
                report(
                    ruleNode, "\(path).delete", "unknown delete rule '\(text)'",
                    Suggestion.didYouMean(text, in: RelationshipDescription.DeleteRule.allCases.map(\.rawValue)))
                return nil
            }
            deleteRule = rule
        }
        let cardinality: RelationshipDescription.Cardinality = toMany != nil ? .toMany(ordered: ordered) : .toOne
        return RelationshipDescription(
            name, cardinality, destination, inverse: inverse, optional: optional, deleteRule: deleteRule)
    }
}
