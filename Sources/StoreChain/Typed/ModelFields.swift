/// The properties of one entity as Swift key paths, so that Foundation's `#Predicate` and
/// `SortDescriptor` can name them: `#Predicate<Band.Fields> { $0.name.starts(with: "R") }`,
/// `SortDescriptor(\Band.Fields.name)`.
///
/// The generated types declare one per entity (`Band.Fields`): an enum without cases whose
/// properties mirror the model's (attributes with their Swift types, a to-one relationship as
/// the destination's `Fields`, optional when the relationship is, a to-many one as an array of
/// them). No value of it exists; StoreChain reads only the key paths, converting a predicate into
/// a `FetchPredicate` and a sort descriptor into a `FetchSortDescriptor` before the fetch.
public protocol ModelFields {
    /// The model's name for the property `keyPath` leads to, or `nil` when it is not one of the
    /// entity's properties.
    static func modelName(for keyPath: AnyKeyPath) -> String?
}

/// A to-many relationship in a predicate: `$0.albums.count` and `$0.albums.isEmpty`.
protocol ModelFieldsCollection {
    /// The aggregate `keyPath` stands for on the collection, if it is one StoreChain knows.
    static func aggregate(for keyPath: AnyKeyPath) -> CollectionAggregate?
}

enum CollectionAggregate {
    case count
    case isEmpty
}

extension Array: ModelFieldsCollection where Element: ModelFields {
    static func aggregate(for keyPath: AnyKeyPath) -> CollectionAggregate? {
        if keyPath == \[Element].count { return .count }
        if keyPath == \[Element].isEmpty { return .isEmpty }
        return nil
    }
}
