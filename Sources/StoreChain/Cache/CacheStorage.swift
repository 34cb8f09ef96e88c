import Foundation

/// Where a cache keeps nodes, query results and complete collections: memory or a SQLite file.
/// `CacheHandler` holds the rules (expiry, policies, revalidation, single-flight); a storage
/// only stores and finds.
///
/// Methods may throw when the storage itself fails (a disk error); the handler then logs a
/// warning and carries on as if the data were not cached.
///
/// The methods are `async` and run on the caller's executor unless a storage says otherwise: a
/// storage in memory answers there (a hit from the main actor stays on it), and a storage that
/// does I/O marks its methods `@concurrent` (or awaits its client's own asynchronous API), so a
/// disk or database read never runs on the caller's executor.
public protocol CacheStorage: Sendable {
    /// Where answers from this storage come from, for `ResponseInfo.origin`.
    var origin: ResponseInfo.Origin { get }

    /// The cached windows of queries with this shape (`CachedQuery.shape`).
    func queries(shape: String) async throws -> [CachedQuery]
    /// The cached windows (and counts) of queries that read any of `entities`
    /// (`CachedQuery.reads`), for a save to edit in place. The default finds none: a save then
    /// drops them all, which is always safe but loses what could have been kept.
    func queries(reading entities: Set<String>) async throws -> [CachedQuery]
    /// Whether the storage keeps objects under temporary IDs (inserts an outbox holds) and
    /// windows that list them; `false` (the default): those are not written to it.
    var keepsTemporaryObjects: Bool { get }
    /// The cached nodes with these IDs (the ones present); marks them recently used.
    func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node]
    /// The cached nodes of a window of the stored query `key` (`CachedQuery.key`), in the order
    /// of `ids`; `nil` unless every one is cached. Marks them recently used. (A cached query
    /// window's lookup: a storage can answer it without building a dictionary that the window is
    /// then read back from, and can keep the answer while none of its nodes changes.)
    func nodes(inWindow ids: ArraySlice<ObjectID>, ofQuery key: String) async throws -> [Node]?
    /// The cached node with this ID, if present; marks it recently used. (An object fault's
    /// lookup, the hottest path: a storage can answer it without building collections.)
    func node(_ id: ObjectID) async throws -> Node?
    /// When the whole collection of `entity` is cached, its freshness.
    func collection(_ entity: String) async throws -> Freshness?
    /// Cached nodes of `entity`: at least those matching `predicate` (a storage may filter
    /// with part of it, or not at all; the handler evaluates the whole predicate afterwards).
    func nodes(of entity: String, matching predicate: FetchPredicate?) async throws -> [Node]
    /// Applies a write; returns the IDs it removed (explicitly, or because a complete
    /// collection no longer holds them).
    func write(_ write: CacheWrite) async throws -> Set<ObjectID>
    /// Gives cached data a new freshness without rewriting it (after "not modified").
    func refresh(_ target: CacheTarget, freshness: Freshness) async throws
    /// Removes everything.
    func clear() async throws
    /// Makes everything held stale from `now` on (`Freshness.expiring(by:)`), keeping it: it is
    /// revalidated before use and served stale only where allowed. The default clears the
    /// storage, which is always safe but loses what could have been served stale.
    func expire(at now: Date) async throws

    /// When several processes share this storage, how long one waits for another's answer to a
    /// request both miss before it asks upstream itself; `nil` (the default): the storage is
    /// this process's alone, and misses go upstream at once.
    var claimWait: Duration? { get }
    /// Claims the request `key` for this process until the claim is released, so that the other
    /// processes wait for its answer instead of asking upstream too; `nil` while another process
    /// holds it. A storage that cannot tell (its server is down) grants the claim.
    func claim(_ key: String) async -> CacheClaim?
    /// Changes other processes sharing this storage made to it (their saves, deletions and
    /// refreshes), as they happen, for as long as the stream is read; `nil` (the default): the
    /// storage is this process's alone.
    func changesFromElsewhere() -> AsyncStream<ChangeEvent>?
}

extension CacheStorage {
    public func expire(at now: Date) async throws {
        try await clear()
    }

    public func queries(reading entities: Set<String>) async throws -> [CachedQuery] { [] }

    public var keepsTemporaryObjects: Bool { false }

    public func nodes(inWindow ids: ArraySlice<ObjectID>, ofQuery key: String) async throws -> [Node]? {
        let found = try await nodes(Array(ids))
        var window: [Node] = []
        window.reserveCapacity(ids.count)
        for id in ids {
            guard let node = found[id] else { return nil }
            window.append(node)
        }
        return window
    }

    public func node(_ id: ObjectID) async throws -> Node? {
        try await nodes([id])[id]
    }

    public var claimWait: Duration? { nil }

    public func claim(_ key: String) async -> CacheClaim? { CacheClaim {} }

    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? { nil }
}

/// A request this process fetches on behalf of every process sharing a cache storage, until it
/// is released.
public struct CacheClaim: Sendable {
    private let onRelease: @Sendable () async -> Void

    /// A claim that runs `release` when it ends.
    public init(release: @escaping @Sendable () async -> Void) {
        onRelease = release
    }

    /// Ends the claim: the other processes stop waiting and read the answer from the storage.
    public func release() async {
        await onRelease()
    }
}

/// One window of a fetch's results: the objects' IDs in order.
public struct CachedQuery: Sendable, Hashable {
    /// The fetch, normalized: objects as the result type, the default cache policy.
    public var request: FetchRequest {
        didSet { key = request.description }
    }
    /// The window's objects, in the request's order.
    public var ids: [ObjectID]
    /// Whether the window reaches the end of the results (fewer objects than the limit).
    public var reachesEnd: Bool
    /// When the window expires, with its validators.
    public var freshness: Freshness
    /// For a counted query (`request` asks for a count, `FetchRequest.forwardedForCache`): how
    /// many objects match. Its `ids` are empty.
    public var count: Int?
    /// The entities whose objects its answer depends on: its own, and every one its predicate
    /// and sort reach. A change to any of them drops the window (`CacheWrite.invalidated`).
    public var reads: Set<String>

    /// A window of `request`; `reads` defaults to the request's entity alone.
    public init(
        request: FetchRequest, ids: [ObjectID], reachesEnd: Bool, freshness: Freshness, count: Int? = nil,
        reads: Set<String> = []
    ) {
        self.request = request
        self.key = request.description
        self.ids = ids
        self.reachesEnd = reachesEnd
        self.freshness = freshness
        self.count = count
        self.reads = reads.union([request.entity])
    }

    /// Identifies this window: the request's description, worked out once.
    public private(set) var key: String
    /// Identifies the query whatever its window: windows of one shape can answer each other.
    public var shape: String { Self.shape(of: request) }

    static func shape(of request: FetchRequest) -> String {
        var whole = request
        whole.fetchOffset = 0
        whole.fetchLimit = nil
        return whole.description
    }

    /// The IDs for `offset`/`limit` when this window covers them.
    func slice(offset: Int, limit: Int?) -> ArraySlice<ObjectID>? {
        let start = offset - request.fetchOffset
        guard start >= 0 else { return nil }
        if let limit {
            guard start + limit <= ids.count || reachesEnd else { return nil }
            let lower = min(start, ids.count)
            return ids[lower..<min(ids.count, start + limit)]
        }
        guard reachesEnd else { return nil }
        return ids[min(start, ids.count)...]
    }
}

extension FetchRequest {
    /// The form caches store and forward: objects (other forms are derived from them) and the
    /// default cache policy.
    var normalizedForCache: FetchRequest {
        var request = self
        request.resultType = .objects
        request.cachePolicy = .useCache
        return request
    }

    /// What a cache forwards, and stores the answer of: a count stays a count (of every match,
    /// so that a terminal that knows the backend's total answers it with one request, and one
    /// stored count answers every window), anything else is `normalizedForCache`.
    var forwardedForCache: FetchRequest {
        guard resultType == .count else { return normalizedForCache }
        var request = self
        request.cachePolicy = .useCache
        request.fetchOffset = 0
        request.fetchLimit = nil
        // Neither changes how many objects match.
        request.sortDescriptors = []
        request.relationshipKeyPathsForPrefetching = []
        return request
    }

    /// The count of this request's window when `total` objects match the predicate.
    func windowedCount(matching total: Int) -> Int {
        max(0, min(total - fetchOffset, fetchLimit ?? .max))
    }
}

/// What a cache writes after a response: nodes, a query window, complete collections,
/// removals, and entities whose cached queries and collections are no longer valid.
public struct CacheWrite: Sendable {
    /// Nodes to store, each with its freshness set.
    public var nodes: [Node] = []
    /// A query window to store, if the write holds one.
    public var query: CachedQuery?
    /// Windows a save edited in place (`CacheStorage.queries(reading:)`): stored after
    /// `invalidated` has dropped the windows of the entities it changed, each over its own key.
    public var editedQueries: [CachedQuery] = []
    /// Entities whose whole collection is now cached, with its freshness. Nodes of these
    /// entities that the write does not hold are removed.
    public var collections: [String: Freshness] = [:]
    /// Objects to remove (deleted, or changed so that their stored state is wrong).
    public var removed: Set<ObjectID> = []
    /// Entities whose changes drop every cached query that reads them (`CachedQuery.reads`),
    /// before the write's own query is stored.
    public var invalidated: Set<String> = []
    /// Entities whose complete collections are dropped (before the write's own collections are
    /// stored): the storage no longer holds every one of their objects as they are.
    public var incomplete: Set<String> = []
    /// Whether the nodes are news, not just answers being kept: a background refresh found them
    /// changed. A storage shared by processes tells the others of news, as of removals and
    /// invalidations.
    public var isRefresh = false
    /// Checked by the storage as it applies the write, with no other write to the same data
    /// between the check and the write (under its lock, in its transaction): when it returns
    /// `false` the storage writes and removes nothing. The cache handler sets it so that an
    /// answer a save or a change overtook on its way to the storage is never stored over it
    /// (`nil`: always written).
    public var condition: (@Sendable () -> Bool)?

    /// An empty write; set the parts it holds.
    public init() {}

    /// Whether the write is to be applied now (`condition`).
    public var holds: Bool { condition?() ?? true }

    /// Checked by the storage as it applies the write, like `condition`, for `editedQueries`
    /// alone: when it returns `false` they are not stored (the windows they replace are still
    /// dropped). The cache handler sets it so that windows edited from what it read are not
    /// stored over another change made meanwhile.
    public var editCondition: (@Sendable () -> Bool)?

    /// Every window the write stores: `query`, then `editedQueries` when `editCondition` holds
    /// (so asked where the storage applies the write).
    public var storedQueries: [CachedQuery] {
        (query.map { [$0] } ?? []) + (editsHold ? editedQueries : [])
    }

    /// Whether `editedQueries` are to be stored now (`editCondition`).
    public var editsHold: Bool { editedQueries.isEmpty ? false : editCondition?() ?? true }

    /// The write for a storage that keeps no temporary IDs (`CacheStorage.keepsTemporaryObjects`):
    /// without objects under them, windows listing them, and relationship values naming them
    /// (left unknown, so they are read again). Written as they are, one of them failed the whole
    /// write, and the storage went on answering what the write was to replace.
    mutating func leaveOutTemporaryIDs() {
        nodes = nodes.compactMap { node in
            guard !node.id.isTemporary else { return nil }
            var node = node
            for (name, value) in node.relationships where value.objectIDs.contains(where: \.isTemporary) {
                node.relationships[name] = nil
            }
            return node
        }
        if query?.ids.contains(where: \.isTemporary) == true { query = nil }
        editedQueries.removeAll { $0.ids.contains(where: \.isTemporary) }
    }
}

/// Cached data whose freshness can be renewed.
public enum CacheTarget: Sendable, Hashable {
    /// The stored window of the query with this key.
    case query(key: String)
    /// The complete collections of these entities.
    case collections(Set<String>)
    /// One stored object.
    case node(ObjectID)
}
