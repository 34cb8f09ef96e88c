import Foundation

/// What a cache holds: objects per entity, query windows, complete collections, expired entries
/// and bytes.
public struct CacheStatistics: Sendable, Hashable {
    /// How many objects of each entity are stored.
    public var objectsByEntity: [String: Int]
    /// How many query windows are stored.
    public var queries: Int
    /// The entities whose whole collection is cached, sorted.
    public var collections: [String]
    /// Entries (objects and query windows) past their expiry, not yet removed.
    public var expired: Int
    /// The bytes of the cached payloads.
    public var payloadBytes: Int
    /// The storage's own size (a file's size on disk), which its overhead and free pages add to.
    public var storedBytes: Int

    /// Statistics with the given figures.
    public init(
        objectsByEntity: [String: Int], queries: Int, collections: [String], expired: Int, payloadBytes: Int,
        storedBytes: Int
    ) {
        self.objectsByEntity = objectsByEntity
        self.queries = queries
        self.collections = collections
        self.expired = expired
        self.payloadBytes = payloadBytes
        self.storedBytes = storedBytes
    }
}

/// A cache storage that can say where it is and what it holds.
public protocol InspectableCacheStorage: CacheStorage {
    /// Where its entries live (a file's path), for people.
    var location: String { get }
    /// What the storage holds now.
    func statistics() async throws -> CacheStatistics
}

/// A handler holding a cache that can be looked into and emptied: `storechain cache stats|clear`
/// and an app's own screens find it with `chain.handlers(of: (any CacheInspecting).self)`.
public protocol CacheInspecting: StoreHandler {
    /// Where the cache's entries live, for people.
    var location: String { get }
    /// What the cache holds now.
    func statistics() async throws -> CacheStatistics
    /// Removes every entry.
    func clear() async throws
    /// Removes `entity`'s objects, its complete collection and every query that reads it (the
    /// next request for them goes to the backend); returns how many objects it removed.
    func forget(entity: String) async throws -> Int
}

extension CacheHandler: CacheInspecting where Storage: InspectableCacheStorage {
    public var location: String { storage.location }
    public func statistics() async throws -> CacheStatistics { try await storage.statistics() }
    public func clear() async throws { try await storage.clear() }

    public func forget(entity: String) async throws -> Int {
        let held = try await storage.nodes(of: entity, matching: nil)
        var write = CacheWrite()
        write.removed = Set(held.map(\.id))
        write.invalidated = [entity]
        write.incomplete = [entity]
        return try await storage.write(write).count
    }
}

extension MemoryCacheStorage: InspectableCacheStorage {
    /// "memory": it lives in this process.
    public var location: String { "memory" }

    public func statistics() async throws -> CacheStatistics { statistics(now: Date()) }
}
