/// The app's view of the data: entities, attributes and relationships with inverses.
///
/// A model is checked when it is made: every relationship must lead to an entity that exists,
/// every declared inverse must point back, names must be unique, keys must exist.
///
/// ```swift
/// let model = try ObjectModel([
///     EntityDescription("Band", key: "id", attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)],
///            relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "band")]),
///     EntityDescription("Album", key: "id", attributes: [AttributeDescription("id", .integer)],
///            relationships: [RelationshipDescription("band", .toOne, "Band", inverse: "albums")]),
/// ])
/// ```
public struct ObjectModel: Sendable, Hashable {
    /// Entities in declaration order.
    public let entities: [EntityDescription]
    private let entityIndex: [String: Int]
    /// The fetch plans made over this model, shared by its copies (not part of its value).
    package let plans = FetchPlanMemo()

    /// Makes a model, reporting every problem at once.
    public init(_ entities: [EntityDescription]) throws(ValidationFailure) {
        let problems = ModelValidator.problems(in: entities)
        if !problems.isEmpty { throw ValidationFailure(problems) }
        self.entities = entities
        self.entityIndex = Dictionary(uniqueKeysWithValues: entities.enumerated().map { ($1.name, $0) })
    }

    public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
        lhs.entities == rhs.entities
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entities)
    }

    /// The entity called `name`, if the model has one.
    public func entity(named name: String) -> EntityDescription? {
        entityIndex[name].map { entities[$0] }
    }

    /// The position in `entities` of the entity named `name`.
    func entityPosition(named name: String) -> Int? {
        entityIndex[name]
    }

    /// Whether the entity at `position` (from `entityPosition(named:)`) has an attribute `name`,
    /// without copying the entity.
    func hasAttribute(_ name: String, inEntityAt position: Int?) -> Bool {
        guard let position else { return false }
        return entities[position].hasAttribute(named: name)
    }

    /// The entity, or an error that suggests the closest name.
    package func requireEntity(_ name: String) throws(StoreChainError) -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw StoreChainError(
                .unknownEntity, "unknown entity '\(name)'",
                suggestion: Suggestion.didYouMean(name, in: entities.map(\.name)))
        }
        return entity
    }

    /// The entities the key paths pass through from `entity` (`band.name` from Album reaches
    /// Band), not counting `entity` itself; a name that is not a relationship ends its path.
    package func entities(along keyPaths: [[String]], from entity: String) -> Set<String> {
        guard let root = self.entity(named: entity) else { return [] }
        var reached = Set<String>()
        for components in keyPaths {
            var current = root
            for name in components {
                guard let relationship = current.relationship(named: name),
                    let next = self.entity(named: relationship.destination)
                else { break }
                reached.insert(next.name)
                current = next
            }
        }
        return reached
    }
}
