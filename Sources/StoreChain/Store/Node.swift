/// The state of one object: its ID, attribute values and the relationships that are known.
public struct Node: Sendable, Hashable {
    public var id: ObjectID
    /// Attribute values by name. A missing name means `nil`.
    public var attributes: [String: Value]
    /// Relationship values by name, for the relationships that are known.
    public var relationships: [String: RelationshipValue]

    public init(id: ObjectID, attributes: [String: Value] = [:], relationships: [String: RelationshipValue] = [:]) {
        self.id = id
        self.attributes = attributes
        self.relationships = relationships
    }

    /// The attribute's value, `null` when absent.
    public subscript(attribute name: String) -> Value {
        attributes[name] ?? .null
    }
}

/// What a relationship holds: one object ID (or none), or a list of them.
public enum RelationshipValue: Sendable, Hashable {
    case toOne(ObjectID?)
    case toMany([ObjectID])

    /// The IDs held, in order.
    public var objectIDs: [ObjectID] {
        switch self {
        case .toOne(let id): id.map { [$0] } ?? []
        case .toMany(let ids): ids
        }
    }
}
