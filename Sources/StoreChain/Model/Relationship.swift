/// A relationship from one entity to another, with its inverse on the destination.
public struct Relationship: Sendable, Hashable {
    /// How many objects a relationship holds.
    public enum Cardinality: Sendable, Hashable {
        case toOne
        case toMany(ordered: Bool)
    }

    public var name: String
    public var destination: String
    public var cardinality: Cardinality
    /// The relationship on the destination that points back, if declared.
    public var inverse: String?
    /// For to-one relationships: whether the destination may be missing.
    public var isOptional: Bool

    public init(
        _ name: String, _ cardinality: Cardinality, _ destination: String, inverse: String? = nil,
        optional: Bool = false
    ) {
        self.name = name
        self.cardinality = cardinality
        self.destination = destination
        self.inverse = inverse
        self.isOptional = optional
    }

    public var isToMany: Bool {
        if case .toMany = cardinality { return true }
        return false
    }

    public var isOrdered: Bool {
        if case .toMany(ordered: true) = cardinality { return true }
        return false
    }
}
