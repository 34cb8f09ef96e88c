/// A kind of object: its key, attributes and relationships.
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name.
    public let name: String
    /// The attribute whose value is the backend's identifier.
    public let key: String
    /// Attributes in declaration order.
    public let attributes: [AttributeDescription]
    /// Relationships in declaration order.
    public let relationships: [RelationshipDescription]

    private let attributeIndex: [String: Int]
    private let relationshipIndex: [String: Int]
    /// The attributes in ascending name order (the first of a repeated name), and their names:
    /// the order ``AttributeValues`` keeps, shared by every node ``attributeValues(_:)`` builds.
    private let attributesInNameOrder: [AttributeDescription]
    private let attributeNamesInOrder: [String]

    /// An entity `name` whose objects are identified by the attribute `key`.
    public init(
        _ name: String, key: String, attributes: [AttributeDescription], relationships: [RelationshipDescription] = []
    ) {
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
        attributesInNameOrder = attributeIndex.values.map { attributes[$0] }.sorted { $0.name < $1.name }
        attributeNamesInOrder = attributesInNameOrder.map(\.name)
    }

    /// A node's attribute values: `value` gives each attribute's value (`nil` to leave it out),
    /// in name order. The nodes built this way for one entity share one array of names, so each
    /// pays for its values only.
    package func attributeValues<Failure: Error>(_ value: (AttributeDescription) throws(Failure) -> Value?)
        throws(Failure)
        -> AttributeValues
    {
        var values: [Value] = []
        values.reserveCapacity(attributesInNameOrder.count)
        // Made only when an attribute is left out; until then the names are the shared ones.
        var names: [String]?
        for (position, attribute) in attributesInNameOrder.enumerated() {
            guard let attributeValue = try value(attribute) else {
                if names == nil { names = Array(attributeNamesInOrder[..<position]) }
                continue
            }
            names?.append(attribute.name)
            values.append(attributeValue)
        }
        return AttributeValues(ascendingNames: names ?? attributeNamesInOrder, values: values)
    }

    /// The attribute called `name`, if the entity has one.
    public func attribute(named name: String) -> AttributeDescription? {
        attributeIndex[name].map { attributes[$0] }
    }

    func hasAttribute(named name: String) -> Bool {
        attributeIndex[name] != nil
    }

    /// The relationship called `name`, if the entity has one.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipIndex[name].map { relationships[$0] }
    }

    /// The relationship called `name`, or an error that suggests the closest name.
    package func requireRelationship(_ name: String) throws(StoreChainError) -> RelationshipDescription {
        guard let relationship = relationship(named: name) else {
            throw StoreChainError(
                .unknownKeyPath, "entity '\(self.name)' has no relationship '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: relationships.map(\.name)))
        }
        return relationship
    }

    /// The key attribute.
    public var keyAttribute: AttributeDescription? { attribute(named: key) }

    /// Every attribute and relationship name, for suggestions.
    package var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}
