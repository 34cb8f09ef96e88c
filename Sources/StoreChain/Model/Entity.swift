/// A kind of object: its key, attributes and relationships.
public struct Entity: Sendable, Hashable {
    public let name: String
    /// The attribute whose value is the backend's identifier.
    public let key: String
    /// Attributes in declaration order.
    public let attributes: [Attribute]
    /// Relationships in declaration order.
    public let relationships: [Relationship]

    private let attributeIndex: [String: Int]
    private let relationshipIndex: [String: Int]

    public init(_ name: String, key: String, attributes: [Attribute], relationships: [Relationship] = []) {
        self.name = name
        self.key = key
        self.attributes = attributes
        self.relationships = relationships
        var attributeIndex: [String: Int] = [:]
        for (index, attribute) in attributes.enumerated() where attributeIndex[attribute.name] == nil {
            attributeIndex[attribute.name] = index
        }
        var relationshipIndex: [String: Int] = [:]
        for (index, relationship) in relationships.enumerated()
        where relationshipIndex[relationship.name] == nil {
            relationshipIndex[relationship.name] = index
        }
        self.attributeIndex = attributeIndex
        self.relationshipIndex = relationshipIndex
    }

    public func attribute(named name: String) -> Attribute? {
        attributeIndex[name].map { attributes[$0] }
    }

    public func relationship(named name: String) -> Relationship? {
        relationshipIndex[name].map { relationships[$0] }
    }

    /// The key attribute.
    public var keyAttribute: Attribute? { attribute(named: key) }

    /// Every attribute and relationship name, for suggestions.
    public var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}
