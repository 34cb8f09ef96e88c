/// The state of one object: its ID, attribute values and the relationships that are known.
///
/// Two nodes are equal when their data are: ID, attributes, relationships and version.
/// Freshness says how old the data is, not what it is, so it does not take part.
public struct Node: Sendable, Hashable {
    /// The object's ID.
    public var id: ObjectID
    /// Attribute values by name. A missing name means `nil`.
    public var attributes: AttributeValues
    /// Relationship values by name, for the relationships that are known.
    public var relationships: [String: RelationshipValue]
    /// The backend's version of the object, when it has one (a revision number or an ETag).
    public var version: String?
    /// When the values were fetched and when they expire.
    public var freshness: Freshness? {
        get { sharedFreshness?.value }
        set { sharedFreshness = newValue.map { OutOfLine($0) } }
    }
    /// The freshness, out of line: a node is copied on every hop and held by the hundred
    /// thousand, and a `Freshness` inline was more than half its size. Nodes of one response
    /// share one box (`Node.sharingFreshness(_:_:)`) instead of allocating one each.
    package var sharedFreshness: OutOfLine<Freshness>?

    /// An object's state: its ID, values, the relationships known, its version and freshness.
    public init(
        id: ObjectID, attributes: AttributeValues = [:], relationships: [String: RelationshipValue] = [:],
        version: String? = nil, freshness: Freshness? = nil
    ) {
        self.id = id
        self.attributes = attributes
        self.relationships = relationships
        self.version = version
        self.sharedFreshness = freshness.map { OutOfLine($0) }
    }

    public static func == (left: Node, right: Node) -> Bool {
        left.id == right.id && left.attributes == right.attributes && left.relationships == right.relationships
            && left.version == right.version
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(attributes)
        hasher.combine(relationships)
        hasher.combine(version)
    }

    /// The attribute's value, `null` when absent.
    public subscript(attribute name: String) -> Value {
        attributes[name] ?? .null
    }

    /// Takes an update's changes: the attributes it names (`null` clears one) and the
    /// relationships it names; everything else is kept.
    public mutating func apply(_ update: Node) {
        for (name, value) in update.attributes {
            attributes[name] = value.isNull ? Value?.none : value
        }
        relationships.merge(update.relationships) { _, new in new }
    }

    /// Folds a later update of the same object into this update: the attributes and
    /// relationships it names win, and an explicit `null` stays, so the combined update still
    /// clears the value.
    package mutating func combine(_ later: Node) {
        for (name, value) in later.attributes { attributes[name] = value }
        relationships.merge(later.relationships) { _, new in new }
    }

    /// The nodes, each with `freshness`, held in one box for all of them.
    package static func sharingFreshness(_ freshness: Freshness, _ nodes: some Sequence<Node>) -> [Node] {
        let shared = OutOfLine(freshness)
        return nodes.map { node in
            var node = node
            node.sharedFreshness = shared
            return node
        }
    }
}

/// What a relationship holds: one object ID (or none), or a list of them.
public enum RelationshipValue: Sendable, Hashable {
    /// The destination of a to-one relationship, or `nil` when it holds none.
    case toOne(ObjectID?)
    /// The destinations of a to-many relationship, in its order.
    case toMany([ObjectID])

    /// The IDs held, in order.
    public var objectIDs: [ObjectID] {
        switch self {
        case .toOne(let id): id.map { [$0] } ?? []
        case .toMany(let ids): ids
        }
    }

    /// The same value with each ID found in `permanentIDs` (temporary → permanent) replaced.
    func remapping(_ permanentIDs: [ObjectID: ObjectID]) -> RelationshipValue {
        switch self {
        case .toOne(let id): .toOne(id.map { permanentIDs[$0] ?? $0 })
        case .toMany(let ids): .toMany(ids.map { permanentIDs[$0] ?? $0 })
        }
    }
}

extension Node {
    /// The same node with its ID and its relationships' IDs replaced where `permanentIDs`
    /// (temporary → permanent) has them.
    func remapping(_ permanentIDs: [ObjectID: ObjectID]) -> Node {
        var node = self
        node.id = permanentIDs[id] ?? id
        node.relationships = relationships.mapValues { $0.remapping(permanentIDs) }
        return node
    }
}
