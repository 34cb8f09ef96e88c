// The model types' former names: an app that imports SwiftData beside StoreChain met
// `Model`, `Attribute` and `Relationship` there too (its macros) and had to qualify every use.
// Kept for one release so that code written against them still builds, with a warning that
// names the new type.

/// The model type's old name.
@available(*, deprecated, renamed: "ObjectModel", message: "renamed so as not to collide with SwiftData's Model")
public typealias Model = ObjectModel

/// The entity type's old name.
@available(*, deprecated, renamed: "EntityDescription", message: "renamed so as not to collide with SwiftData")
public typealias Entity = EntityDescription

/// The attribute type's old name.
@available(
    *, deprecated, renamed: "AttributeDescription", message: "renamed so as not to collide with SwiftData's Attribute"
)
public typealias Attribute = AttributeDescription

/// The relationship type's old name.
@available(
    *, deprecated, renamed: "RelationshipDescription",
    message: "renamed so as not to collide with SwiftData's Relationship"
)
public typealias Relationship = RelationshipDescription
