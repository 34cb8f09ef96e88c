/// A relationship from one entity to another, with its inverse on the destination.
public struct RelationshipDescription: Sendable, Hashable {
    /// How many objects a relationship holds.
    public enum Cardinality: Sendable, Hashable {
        /// At most one object.
        case toOne
        /// Any number of objects, in an order the backend keeps when `ordered`.
        case toMany(ordered: Bool)
    }

    /// What deleting an object does to the objects this relationship holds (Core Data's delete
    /// rules).
    public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
        /// They stay; the deleted object leaves their inverse relationship (the default).
        case nullify
        /// They are deleted with it.
        case cascade
        /// The delete fails while the relationship holds any object.
        case deny
    }

    /// The relationship's name.
    public var name: String
    /// The entity it leads to.
    public var destination: String
    /// How many objects it holds.
    public var cardinality: Cardinality
    /// The relationship on the destination that points back, if declared.
    public var inverse: String?
    /// For to-one relationships: whether the destination may be missing.
    public var isOptional: Bool
    /// What deleting the source object does to the objects this relationship holds.
    public var deleteRule: DeleteRule

    /// A relationship `name` to `destination`, with its inverse, whether a to-one may be missing,
    /// and its delete rule.
    public init(
        _ name: String, _ cardinality: Cardinality, _ destination: String, inverse: String? = nil,
        optional: Bool = false, deleteRule: DeleteRule = .nullify
    ) {
        self.name = name
        self.cardinality = cardinality
        self.destination = destination
        self.inverse = inverse
        self.isOptional = optional
        self.deleteRule = deleteRule
    }

    /// Whether it holds any number of objects.
    public var isToMany: Bool {
        if case .toMany = cardinality { return true }
        return false
    }

    /// Whether it is to-many and keeps the order of its objects.
    public var isOrdered: Bool {
        if case .toMany(ordered: true) = cardinality { return true }
        return false
    }
}
