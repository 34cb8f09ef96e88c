/// A typed attribute of an entity.
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name, as key paths and records use it.
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether the attribute may be missing (`nil`).
    public var isOptional: Bool
    /// The value used when a record does not give one.
    public var defaultValue: Value?

    /// An attribute `name` of `type`, optional or not, with a default for inserted objects.
    public init(_ name: String, _ type: AttributeType, optional: Bool = false, default defaultValue: Value? = nil) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
    }
}
