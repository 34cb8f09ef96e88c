import Foundation

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
/// Foundation's `#Predicate` and `SortDescriptor` work too, over the type's `Fields`:
///
/// ```swift
/// let icelandic = try await Album.fetch(
///     context, where: #Predicate { $0.band.country == "IS" && ($0.year ?? 0) >= 1999 },
///     sortBy: [SortDescriptor(\.year, order: .reverse)])
/// ```
///
/// Identity is the wrapped object's: two values are equal when they wrap the same object of the
/// same context (a context holds one object per ID, so fetching a row twice gives equal values);
/// the same row in two contexts gives two objects that are not equal, so compare `objectID`
/// across contexts. A new object's `objectID` is temporary until it is saved; equality holds
/// across the save.
public protocol TypedObject: Sendable, Hashable {
    /// The entity's properties as key paths, for `#Predicate` and `SortDescriptor`.
    associatedtype Fields: ModelFields
    /// A snapshot of the object's attribute values (the generated `Values`).
    associatedtype Values: Sendable, Hashable
    /// The attribute values the context holds, read without a trip; `nil` while a fault.
    var loaded: Values? { get }
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

    /// A fetch request for this entity from a Foundation predicate and sort descriptors over
    /// `Fields`.
    ///
    /// - Throws: `unsupported-predicate` naming the part of the predicate or the sort key that the
    ///   predicate language cannot express (see `FetchPredicate.init(_:)`).
    public static func fetchRequest(
        where predicate: Predicate<Fields>, sortBy sort: [SortDescriptor<Fields>] = [], limit: Int? = nil,
        offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) throws(StoreChainError) -> FetchRequest {
        try foundationRequest(predicate, sort, limit: limit, offset: offset, prefetch: prefetch)
    }

    /// A fetch request for every object of this entity, in the order of Foundation sort
    /// descriptors.
    public static func fetchRequest(
        sortBy sort: [SortDescriptor<Fields>], limit: Int? = nil, offset: Int = 0,
        prefetching prefetch: [PrefetchKey<Self>] = []
    ) throws(StoreChainError) -> FetchRequest {
        try foundationRequest(nil, sort, limit: limit, offset: offset, prefetch: prefetch)
    }

    private static func foundationRequest(
        _ predicate: Predicate<Fields>?, _ sort: [SortDescriptor<Fields>], limit: Int?, offset: Int,
        prefetch: [PrefetchKey<Self>]
    ) throws(StoreChainError) -> FetchRequest {
        var sortDescriptors: [FetchSortDescriptor] = []
        for descriptor in sort { sortDescriptors.append(try FetchSortDescriptor(descriptor)) }
        var fetchPredicate: FetchPredicate?
        if let predicate { fetchPredicate = try FetchPredicate(predicate) }
        return FetchRequest(
            entity: entityName, predicate: fetchPredicate, sortDescriptors: sortDescriptors, fetchLimit: limit,
            fetchOffset: offset, relationshipKeyPathsForPrefetching: prefetch.map(\.keyPath))
    }

    /// Fetches the objects that match a Foundation predicate, in the order of Foundation sort
    /// descriptors: `Band.fetch(context, where: #Predicate { $0.name.starts(with: "R") })`.
    public static func fetch(
        _ context: ObjectContext, where predicate: Predicate<Fields>, sortBy sort: [SortDescriptor<Fields>] = [],
        limit: Int? = nil, offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) async throws -> [Self] {
        let request = try fetchRequest(
            where: predicate, sortBy: sort, limit: limit, offset: offset, prefetching: prefetch)
        return try await context.fetch(request).compactMap(Self.init)
    }

    /// Fetches every object in the order of Foundation sort descriptors:
    /// `Band.fetch(context, sortBy: [SortDescriptor(\.name)])`.
    public static func fetch(
        _ context: ObjectContext, sortBy sort: [SortDescriptor<Fields>], limit: Int? = nil, offset: Int = 0,
        prefetching prefetch: [PrefetchKey<Self>] = []
    ) async throws -> [Self] {
        let request = try fetchRequest(sortBy: sort, limit: limit, offset: offset, prefetching: prefetch)
        return try await context.fetch(request).compactMap(Self.init)
    }

    /// How many objects match a Foundation predicate.
    public static func count(_ context: ObjectContext, where predicate: Predicate<Fields>) async throws -> Int {
        try await context.count(for: fetchRequest(where: predicate))
    }

    /// The objects that match a Foundation predicate, now and after every change that alters the
    /// result.
    ///
    /// - Throws: `unsupported-predicate` at once, before anything is observed.
    public static func observe(
        _ context: ObjectContext, where predicate: Predicate<Fields>, sortBy sort: [SortDescriptor<Fields>] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws(StoreChainError) -> TypedObservation<Self> {
        TypedObservation(
            context.observe(try fetchRequest(where: predicate, sortBy: sort, limit: limit, offset: offset)))
    }

    /// A fetch request from a Foundation predicate in the order of typed sort keys: the two
    /// spellings mix (`where: #Predicate { … }, sortedBy: [.year.descending]`).
    public static func fetchRequest(
        where predicate: Predicate<Fields>, sortedBy sort: [SortKey<Self>], limit: Int? = nil, offset: Int = 0,
        prefetching prefetch: [PrefetchKey<Self>] = []
    ) throws(StoreChainError) -> FetchRequest {
        var request = try foundationRequest(predicate, [], limit: limit, offset: offset, prefetch: prefetch)
        request.sortDescriptors = sort.map(\.descriptor)
        return request
    }

    /// A fetch request from a typed predicate in the order of Foundation sort descriptors
    /// (`where: Album.Keys.year >= 2000, sortBy: [SortDescriptor(\.title)]`).
    public static func fetchRequest(
        where predicate: FetchPredicate?, sortBy sort: [SortDescriptor<Fields>], limit: Int? = nil, offset: Int = 0,
        prefetching prefetch: [PrefetchKey<Self>] = []
    ) throws(StoreChainError) -> FetchRequest {
        var request = try foundationRequest(nil, sort, limit: limit, offset: offset, prefetch: prefetch)
        request.predicate = predicate
        return request
    }

    /// Fetches the objects that match a Foundation predicate, in the order of typed sort keys.
    public static func fetch(
        _ context: ObjectContext, where predicate: Predicate<Fields>, sortedBy sort: [SortKey<Self>],
        limit: Int? = nil, offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) async throws -> [Self] {
        let request = try fetchRequest(
            where: predicate, sortedBy: sort, limit: limit, offset: offset, prefetching: prefetch)
        return try await context.fetch(request).compactMap(Self.init)
    }

    /// Fetches the objects that match a typed predicate, in the order of Foundation sort
    /// descriptors.
    public static func fetch(
        _ context: ObjectContext, where predicate: FetchPredicate?, sortBy sort: [SortDescriptor<Fields>],
        limit: Int? = nil, offset: Int = 0, prefetching prefetch: [PrefetchKey<Self>] = []
    ) async throws -> [Self] {
        let request = try fetchRequest(
            where: predicate, sortBy: sort, limit: limit, offset: offset, prefetching: prefetch)
        return try await context.fetch(request).compactMap(Self.init)
    }

    /// The objects that match a Foundation predicate in the order of typed sort keys, now and
    /// after every change that alters the result.
    ///
    /// - Throws: `unsupported-predicate` at once, before anything is observed.
    public static func observe(
        _ context: ObjectContext, where predicate: Predicate<Fields>, sortedBy sort: [SortKey<Self>],
        limit: Int? = nil, offset: Int = 0
    ) throws(StoreChainError) -> TypedObservation<Self> {
        TypedObservation(
            context.observe(try fetchRequest(where: predicate, sortedBy: sort, limit: limit, offset: offset)))
    }

    /// Every object of this entity in the order of Foundation sort descriptors, now and after
    /// every change that alters the result.
    ///
    /// - Throws: `unsupported-predicate` at once, for a sort key the predicate language lacks.
    public static func observe(
        _ context: ObjectContext, sortBy sort: [SortDescriptor<Fields>], limit: Int? = nil, offset: Int = 0
    ) throws(StoreChainError) -> TypedObservation<Self> {
        TypedObservation(context.observe(try fetchRequest(sortBy: sort, limit: limit, offset: offset)))
    }
}
