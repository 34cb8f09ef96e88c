/// A request for objects of one entity: which ones, in what order, which window, in what form.
///
/// ```swift
/// var request = FetchRequest(entity: "Album")
/// request.predicate = try FetchPredicate("year >= 1990 AND band.name BEGINSWITH[c] %@", "rue")
/// request.sortDescriptors = [FetchSortDescriptor("year", ascending: false)]
/// request.fetchLimit = 10
/// ```
public struct FetchRequest: Sendable, Hashable, CustomStringConvertible {
    /// The form results come back in.
    public enum ResultType: Sendable, Hashable {
        /// The objects themselves (nodes).
        case objects
        /// Only the objects' IDs.
        case objectIDs
        /// How many objects match, as one number.
        case count
        /// Dictionaries of the named properties (attributes, or key paths through to-one
        /// relationships such as `band.name`).
        case dictionaries([String])
    }

    /// The entity to fetch.
    public var entity: String
    /// Which objects; `nil` means all.
    public var predicate: FetchPredicate?
    /// The order of the results; the entity's key breaks ties, so every order is total.
    public var sortDescriptors: [FetchSortDescriptor]
    /// At most this many results; `nil` means no limit, and so does `0`, as in Core Data (it is
    /// stored as `nil`).
    public var fetchLimit: Int? {
        didSet { if fetchLimit == 0 { fetchLimit = nil } }
    }
    /// Skip this many results first.
    public var fetchOffset: Int
    /// The form results come back in.
    public var resultType: ResultType
    /// Relationship key paths to load together with the results (`albums`, `albums.tracks`).
    public var relationshipKeyPathsForPrefetching: [String]
    /// Whether the answer may come from caches, must not, or may only (`CachePolicy`).
    public var cachePolicy: CachePolicy

    /// A fetch of `entity`: every object by default, in key order, with no limit.
    public init(
        entity: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = [],
        fetchLimit: Int? = nil, fetchOffset: Int = 0, resultType: ResultType = .objects,
        relationshipKeyPathsForPrefetching: [String] = [], cachePolicy: CachePolicy = .useCache
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit == 0 ? nil : fetchLimit
        self.fetchOffset = fetchOffset
        self.resultType = resultType
        self.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        self.cachePolicy = cachePolicy
    }

    /// A canonical one-line form of what is asked (not how it may be cached): equal requests
    /// give equal text, so it serves as a cache key.
    public var description: String {
        var parts = [entity, predicate?.format ?? "TRUEPREDICATE"]
        parts.append("sort=" + sortDescriptors.map(\.description).joined(separator: ","))
        parts.append("offset=\(fetchOffset)")
        parts.append("limit=" + (fetchLimit.map(String.init) ?? "none"))
        switch resultType {
        case .objects: parts.append("objects")
        case .objectIDs: parts.append("ids")
        case .count: parts.append("count")
        case .dictionaries(let properties): parts.append("dictionaries=" + properties.joined(separator: ","))
        }
        if !relationshipKeyPathsForPrefetching.isEmpty {
            parts.append("prefetch=" + relationshipKeyPathsForPrefetching.joined(separator: ","))
        }
        return parts.joined(separator: " | ")
    }
}
