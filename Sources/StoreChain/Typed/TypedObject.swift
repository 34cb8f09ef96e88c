/// An object of one entity with typed accessors. The StoreChainModelPlugin generates one type
/// per entity of a model file (`Album`, `Band`, …); this protocol gives them typed fetches,
/// counts and observations:
///
/// ```swift
/// let albums = try await Album.fetch(
///     context, where: Album.Keys.year >= 1990, sortedBy: [.year.descending], prefetching: [.band])
/// context.delete(albums[0])
/// ```
///
/// Identity is the wrapped object's: two values are equal when they wrap the same object of the
/// same context (a context holds one object per ID, so fetching a row twice gives equal values);
/// the same row in two contexts gives two objects that are not equal, so compare `objectID`
/// across contexts. A new object's `objectID` is temporary until it is saved; equality holds
/// across the save.
public protocol TypedObject: Sendable, Hashable {
    /// The model entity this type stands for.
    static var entityName: String { get }
    /// The managed object it wraps.
    var object: ManagedObject { get }
    /// Wraps an object of `entityName`; `nil` for another entity.
    init?(_ object: ManagedObject)
}

extension TypedObject {
    /// The wrapped object's ID (temporary until it is saved).
    public var objectID: ObjectID { object.objectID }

    /// Whether the object was inserted and not saved yet.
    public var isInserted: Bool { object.isInserted }
    /// Whether it is marked for deletion when the context is saved.
    public var isDeleted: Bool { object.isDeleted }
    /// Whether it has changes the context has not saved yet.
    public var hasChanges: Bool { object.hasChanges }
    /// Whether its saved changes have not reached the backend yet (an outbox holds them).
    public var hasUnsentChanges: Bool { object.hasUnsentChanges }

    /// A fetch request for this entity.
    public static func fetchRequest(
        where predicate: FetchPredicate? = nil, sortedBy sort: [SortKey<Self>] = [], limit: Int? = nil,
        offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) -> FetchRequest {
        FetchRequest(
            entity: entityName, predicate: predicate, sortDescriptors: sort.map(\.descriptor), fetchLimit: limit,
            fetchOffset: offset, relationshipKeyPathsForPrefetching: prefetch.map(\.keyPath))
    }

    /// Fetches objects of this entity; relationships named in `prefetching` come with them.
    public static func fetch(
        _ context: ObjectContext, where predicate: FetchPredicate? = nil, sortedBy sort: [SortKey<Self>] = [],
        limit: Int? = nil, offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) async throws -> [Self] {
        let request = fetchRequest(
            where: predicate, sortedBy: sort, limit: limit, offset: offset, prefetching: prefetch)
        return try await context.fetch(request).compactMap(Self.init)
    }

    /// How many objects of this entity match `predicate`.
    public static func count(_ context: ObjectContext, where predicate: FetchPredicate? = nil) async throws -> Int {
        try await context.count(for: fetchRequest(where: predicate))
    }

    /// The objects that match, now and after every change that alters the result (see
    /// `ObjectContext.observe(_:)`).
    public static func observe(
        _ context: ObjectContext, where predicate: FetchPredicate? = nil, sortedBy sort: [SortKey<Self>] = [],
        limit: Int? = nil, offset: Int = 0
    ) -> TypedObservation<Self> {
        TypedObservation(
            context.observe(fetchRequest(where: predicate, sortedBy: sort, limit: limit, offset: offset)))
    }
}
