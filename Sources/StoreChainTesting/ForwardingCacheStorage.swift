import Foundation
import StoreChain

/// A cache storage that passes every call to another one, `inner`: a test storage declares only
/// the calls it changes (a write held back, a read that fails, a bug to catch) and forwards the
/// rest.
///
/// ```swift
/// final class FailingReads: ForwardingCacheStorage {
///     let inner = MemoryCacheStorage()
///     func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] { throw Unplugged() }
/// }
/// ```
public protocol ForwardingCacheStorage: CacheStorage {
    /// The type of the storage it forwards to.
    associatedtype Inner: CacheStorage
    /// The storage that holds the data.
    var inner: Inner { get }
}

extension ForwardingCacheStorage {
    public var origin: ResponseInfo.Origin { inner.origin }
    public func queries(shape: String) async throws -> [CachedQuery] { try await inner.queries(shape: shape) }
    public func queries(reading entities: Set<String>) async throws -> [CachedQuery] {
        try await inner.queries(reading: entities)
    }
    public var keepsTemporaryObjects: Bool { inner.keepsTemporaryObjects }
    public func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] { try await inner.nodes(ids) }
    public func nodes(inWindow ids: ArraySlice<ObjectID>, ofQuery key: String) async throws -> [Node]? {
        try await inner.nodes(inWindow: ids, ofQuery: key)
    }
    public func node(_ id: ObjectID) async throws -> Node? { try await inner.node(id) }
    public func collection(_ entity: String) async throws -> Freshness? { try await inner.collection(entity) }
    public func nodes(of entity: String, matching predicate: FetchPredicate?) async throws -> [Node] {
        try await inner.nodes(of: entity, matching: predicate)
    }
    public func write(_ write: CacheWrite) async throws -> Set<ObjectID> { try await inner.write(write) }
    public func refresh(_ target: CacheTarget, freshness: Freshness) async throws {
        try await inner.refresh(target, freshness: freshness)
    }
    public func clear() async throws { try await inner.clear() }
    public func expire(at now: Date) async throws { try await inner.expire(at: now) }
    public var claimWait: Duration? { inner.claimWait }
    public func claim(_ key: String) async -> CacheClaim? { await inner.claim(key) }
    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? { inner.changesFromElsewhere() }
}
