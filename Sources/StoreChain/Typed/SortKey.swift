/// A sort order for fetches of one typed entity: `sortedBy: [.year.descending, .title]`. The
/// generated code declares one static member per sortable attribute.
public struct SortKey<Object: TypedObject>: Sendable, Hashable {
    /// The order as the untyped fetch request states it.
    public let descriptor: FetchSortDescriptor

    /// An ascending order by `keyPath` (an attribute, or a to-one path such as `band.name`).
    public init(_ keyPath: String) {
        descriptor = FetchSortDescriptor(keyPath)
    }

    init(_ descriptor: FetchSortDescriptor) {
        self.descriptor = descriptor
    }

    /// The same key, largest first.
    public var descending: Self {
        Self(FetchSortDescriptor(descriptor.keyPath, ascending: false, caseInsensitive: descriptor.caseInsensitive))
    }

    /// The same key, comparing text without regard to case.
    public var caseInsensitive: Self {
        Self(FetchSortDescriptor(descriptor.keyPath, ascending: descriptor.ascending, caseInsensitive: true))
    }
}

/// A relationship of one typed entity to load with a fetch: `prefetching: [.band]`. The
/// generated code declares one static member per relationship.
public struct PrefetchKey<Object: TypedObject>: Sendable, Hashable {
    /// The relationship's key path.
    public let keyPath: String

    /// A sort by `keyPath`, ascending.
    public init(_ keyPath: String) {
        self.keyPath = keyPath
    }
}
