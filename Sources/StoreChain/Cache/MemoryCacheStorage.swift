import Foundation

/// Cache storage in memory: nodes stored once by ID, query windows as lists of IDs, bounded by
/// object count and approximate bytes with least-recently-used eviction.
public final class MemoryCacheStorage: CacheStorage, SaveOrderSharing {
    /// How much the storage keeps before it evicts the least recently used entries.
    public struct Limits: Sendable, Hashable {
        /// Objects kept at most.
        public var maxObjects: Int
        /// Approximate bytes of nodes and query windows together.
        public var maxBytes: Int

        /// Limits of `maxObjects` objects and about `maxBytes` bytes (64 MiB by default).
        public init(maxObjects: Int = 10_000, maxBytes: Int = 64 << 20) {
            self.maxObjects = maxObjects
            self.maxBytes = maxBytes
        }
    }

    private enum Entry: Hashable {
        case node(ObjectID)
        case query(String)

        /// A node's entry hashes as its ID, so a hit hashes the ID once for its lookup and its
        /// use (`LRUOrder.touch(_:hash:)`).
        func hash(into hasher: inout Hasher) {
            switch self {
            case .node(let id): hasher.combine(id)
            case .query(let key): hasher.combine(key)
            }
        }
    }

    /// A query window's answer, kept while none of the cache's nodes changes (any change of a
    /// node drops them all): its nodes, and their positions in the use order, so that asking
    /// again hashes and looks up nothing. Kept only within the byte limit, never evicting for it.
    private struct Window {
        var ids: ArraySlice<ObjectID>
        var nodes: [Node]
        var positions: [Int]

        /// What keeping it takes beyond the nodes themselves (shared with the cache's own).
        var byteCount: Int { 64 + nodes.count * (MemoryLayout<Node>.stride + MemoryLayout<Int>.stride) }
    }

    private struct State {
        var nodes = Dataset()
        /// By query key; only for queries stored.
        var windows: [String: Window] = [:]
        var windowBytes = 0
        var queries: [String: CachedQuery] = [:]
        /// Each cached query's key under every entity it reads (`CachedQuery.reads`).
        var queryKeysByEntity: [String: Set<String>] = [:]
        var keysByShape: [String: Set<String>] = [:]
        var collections: [String: Freshness] = [:]
        var bytes = 0
        var order = LRUOrder<Entry>()
    }

    /// How much it keeps.
    public let limits: Limits
    private let state = Locked(State())
    /// Kept by every cache handler over this storage.
    package let saveOrder = SaveOrder()

    /// An empty storage bounded by `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public var origin: ResponseInfo.Origin { .memory }

    /// How many nodes and query windows are held, and their approximate size (with the answers
    /// kept for windows).
    public var usage: (objects: Int, queries: Int, bytes: Int) {
        state.withLock { ($0.nodes.count, $0.queries.count, $0.bytes + $0.windowBytes) }
    }

    /// What it holds, with entries expired by `now` (`InspectableCacheStorage.statistics()`
    /// asks with the system's time).
    public func statistics(now: Date) -> CacheStatistics {
        state.withLock { state in
            var byEntity: [String: Int] = [:]
            var expired = 0
            for entity in state.nodes.entityNames {
                let nodes = state.nodes.nodes(of: entity)
                if !nodes.isEmpty { byEntity[entity] = nodes.count }
                expired += nodes.count { !($0.freshness?.isFresh(at: now) ?? false) }
            }
            expired += state.queries.values.count { !$0.freshness.isFresh(at: now) }
            let bytes = state.bytes + state.windowBytes
            return CacheStatistics(
                objectsByEntity: byEntity, queries: state.queries.count, collections: state.collections.keys.sorted(),
                expired: expired, payloadBytes: bytes, storedBytes: bytes)
        }
    }

    public func queries(shape: String) async -> [CachedQuery] {
        state.withLock { state in
            (state.keysByShape[shape] ?? []).compactMap { key in
                state.order.touch(.query(key))
                return state.queries[key]
            }
        }
    }

    public func queries(reading entities: Set<String>) async -> [CachedQuery] {
        state.withLock { state in
            let keys = entities.reduce(into: Set<String>()) { keys, entity in
                keys.formUnion(state.queryKeysByEntity[entity] ?? [])
            }
            return keys.compactMap { state.queries[$0] }
        }
    }

    public var keepsTemporaryObjects: Bool { true }

    public func nodes(_ ids: [ObjectID]) async -> [ObjectID: Node] {
        state.withLock { state in
            var found: [ObjectID: Node] = [:]
            found.reserveCapacity(ids.count)
            for id in ids {
                if let node = Self.use(id, in: &state) { found[id] = node }
            }
            return found
        }
    }

    public func nodes(inWindow ids: ArraySlice<ObjectID>, ofQuery key: String) async -> [Node]? {
        state.withLock { state in
            // The same IDs are the same buffer as a rule (both slice the stored query's IDs), which
            // compares without reading them.
            if let window = state.windows[key], window.ids == ids {
                for position in window.positions { state.order.touch(at: position) }
                return window.nodes
            }
            var window = Window(ids: ids, nodes: [], positions: [])
            window.nodes.reserveCapacity(ids.count)
            window.positions.reserveCapacity(ids.count)
            for id in ids {
                let hash = id.hashValue
                guard let (node, tag) = state.nodes.entry(id, hash: hash) else { return nil }
                window.nodes.append(node)
                window.positions.append(Self.touch(id, hash: hash, tag: tag, in: &state))
            }
            // Kept in place of another window of the same query, if it fits.
            let replaced = state.windows[key]?.byteCount ?? 0
            if state.queries[key] != nil,
                state.bytes + state.windowBytes - replaced + window.byteCount <= limits.maxBytes
            {
                state.windows[key] = window
                state.windowBytes += window.byteCount - replaced
            }
            return window.nodes
        }
    }

    public func node(_ id: ObjectID) async -> Node? {
        state.withLock { state in Self.use(id, in: &state) }
    }

    /// The node with this ID, marked recently used: one lookup finds the node and its place in
    /// the use order (kept with it as its tag).
    private static func use(_ id: ObjectID, in state: inout State) -> Node? {
        let hash = id.hashValue
        guard let (node, tag) = state.nodes.entry(id, hash: hash) else { return nil }
        touch(id, hash: hash, tag: tag, in: &state)
        return node
    }

    /// Marks the node just used; returns its place in the use order. Every node is inserted with
    /// its place as its tag (`insert`); a node without one is looked up by key instead.
    @discardableResult
    private static func touch(_ id: ObjectID, hash: Int, tag: Int, in state: inout State) -> Int {
        guard tag >= 0 else { return state.order.touch(.node(id), hash: hash) }
        state.order.touch(at: tag)
        return tag
    }

    public func collection(_ entity: String) async -> Freshness? {
        state.withLock { $0.collections[entity] }
    }

    public func nodes(of entity: String, matching predicate: FetchPredicate?) async -> [Node] {
        state.withLock { state in state.nodes.nodes(of: entity) }
    }

    public func write(_ write: CacheWrite) async -> Set<ObjectID> {
        state.withLock { state in
            guard write.holds else { return [] }
            for entity in write.invalidated {
                for key in state.queryKeysByEntity[entity] ?? [] { Self.remove(.query(key), from: &state) }
            }
            for entity in write.incomplete { state.collections[entity] = nil }
            var removed = Set<ObjectID>()
            for id in write.removed where state.nodes.node(for: id) != nil {
                Self.remove(.node(id), from: &state)
                removed.insert(id)
            }
            for node in write.nodes { Self.insert(node, into: &state) }
            if !write.collections.isEmpty {
                let written = Set(write.nodes.map(\.id))
                for (entity, freshness) in write.collections {
                    for id in state.nodes.ids(of: entity) where !written.contains(id) {
                        Self.remove(.node(id), from: &state)
                        removed.insert(id)
                    }
                    state.collections[entity] = freshness
                }
            }
            for query in write.storedQueries {
                Self.remove(.query(query.key), from: &state)
                state.queries[query.key] = query
                state.keysByShape[query.shape, default: []].insert(query.key)
                for entity in query.reads { state.queryKeysByEntity[entity, default: []].insert(query.key) }
                Self.account(.query(query.key), size: 64 + query.key.utf8.count + query.ids.count * 40, in: &state)
            }
            evict(&state)
            return removed
        }
    }

    public func refresh(_ target: CacheTarget, freshness: Freshness) async {
        state.withLock { state in
            switch target {
            case .query(let key): state.queries[key]?.freshness = freshness
            case .collections(let entities):
                for entity in entities where state.collections[entity] != nil { state.collections[entity] = freshness }
            case .node(let id):
                guard var node = state.nodes.node(for: id) else { return }
                node.freshness = freshness
                Self.store(node, in: &state)
            }
        }
    }

    public func clear() async {
        state.withLock { $0 = State() }
    }

    public func expire(at now: Date) async {
        state.withLock { state in
            Self.dropWindows(&state)
            for entity in state.nodes.entityNames {
                for var node in state.nodes.nodes(of: entity) {
                    node.freshness = (node.freshness ?? Freshness()).expiring(by: now)
                    state.nodes.upsert(node)
                }
            }
            for key in state.queries.keys {
                if let freshness = state.queries[key]?.freshness {
                    state.queries[key]?.freshness = freshness.expiring(by: now)
                }
            }
            for (entity, freshness) in state.collections { state.collections[entity] = freshness.expiring(by: now) }
        }
    }

    /// Stores the node and accounts for it; its place in the use order is kept with it.
    private static func insert(_ node: Node, into state: inout State) {
        let size = node.approximateByteCount
        let (position, previousSize) = state.order.set(.node(node.id), size: size, hash: node.id.hashValue)
        state.bytes += size - previousSize
        dropWindows(&state)
        state.nodes.upsert(node, tag: position)
    }

    /// Stores the node in place of the one with its ID; the kept windows go, as they may hold it.
    private static func store(_ node: Node, in state: inout State) {
        dropWindows(&state)
        state.nodes.upsert(node)
    }

    private static func dropWindows(_ state: inout State) {
        guard !state.windows.isEmpty else { return }
        state.windows = [:]
        state.windowBytes = 0
    }

    private static func account(_ entry: Entry, size: Int, in state: inout State) {
        state.bytes += size - state.order.set(entry, size: size)
    }

    private static func remove(_ entry: Entry, from state: inout State) {
        switch entry {
        case .node(let id):
            guard state.nodes.remove(id) else { return }
            dropWindows(&state)
        case .query(let key):
            guard let query = state.queries.removeValue(forKey: key) else { return }
            if let window = state.windows.removeValue(forKey: key) { state.windowBytes -= window.byteCount }
            state.keysByShape[query.shape]?.remove(key)
            if state.keysByShape[query.shape]?.isEmpty == true { state.keysByShape[query.shape] = nil }
            for entity in query.reads {
                state.queryKeysByEntity[entity]?.remove(key)
                if state.queryKeysByEntity[entity]?.isEmpty == true { state.queryKeysByEntity[entity] = nil }
            }
        }
        state.bytes -= state.order.remove(entry)
    }

    /// Evicts least recently used entries until within the limits, after the kept window
    /// answers (which go first, so that they never cost an entry its place). Evicting a node of a
    /// complete collection makes it incomplete.
    private func evict(_ state: inout State) {
        if state.bytes + state.windowBytes > limits.maxBytes { Self.dropWindows(&state) }
        while state.nodes.count > limits.maxObjects || state.bytes > limits.maxBytes,
            let entry = state.order.leastRecent
        {
            if case .node(let id) = entry { state.collections[id.entity] = nil }
            Self.remove(entry, from: &state)
        }
    }
}

/// The memory cache: `CacheHandler` over `MemoryCacheStorage`.
///
/// ```swift
/// let chain = Chain(terminal: remote) {
///     MemoryCache(model: model, limits: .init(maxObjects: 10_000))
/// }
/// ```
public typealias MemoryCache = CacheHandler<MemoryCacheStorage>

extension CacheHandler where Storage == MemoryCacheStorage {
    /// A memory cache over a storage of its own (`memory-cache` in a pipeline file).
    public convenience init(
        model: ObjectModel, limits: MemoryCacheStorage.Limits = .init(), options: CacheOptions = CacheOptions()
    ) {
        self.init(name: "memory-cache", model: model, storage: MemoryCacheStorage(limits: limits), options: options)
    }
}

extension Node {
    /// A rough size in memory, for cache limits.
    var approximateByteCount: Int {
        var bytes = 96
        for (name, value) in attributes { bytes += 32 + name.utf8.count + value.approximateByteCount }
        for (name, value) in relationships { bytes += 32 + name.utf8.count + value.objectIDs.count * 40 }
        return bytes
    }
}

extension Value {
    var approximateByteCount: Int {
        switch self {
        case .string(let text): 16 + text.utf8.count
        case .data(let data): 16 + data.count
        case .url(let url): 16 + url.absoluteString.utf8.count
        case .json(let json): 16 + json.description.utf8.count
        default: 16
        }
    }
}

extension MemoryCacheStorage.Limits: Decodable {
    private enum CodingKeys: String, CodingKey {
        case maxObjects
        case maxBytes = "maxSize"
    }

    /// Reads `{ max-objects: 10000, max-size: 64MB }`; a key left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = Self()
        self.init(
            maxObjects: try container.decodeIfPresent(PositiveCount.self, forKey: .maxObjects)?.value
                ?? defaults.maxObjects,
            maxBytes: try container.decodeIfPresent(ByteSize.self, forKey: .maxBytes)?.bytes ?? defaults.maxBytes)
    }
}
