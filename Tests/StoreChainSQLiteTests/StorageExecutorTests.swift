import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// Where cache storage runs (Docs/Architecture.md, Invariants 7): a fetch made on the main
/// actor reads and writes its SQLite file elsewhere, and a memory-cache hit stays on the main
/// actor.
@Suite struct StorageExecutorTests {
    @MainActor @Test func aDiskCacheReadsAndWritesOffTheMainActor() async throws {
        MainQueueProbe.mark()
        let store = try MusicFixture.store()
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        let disk = DiskCache(model: store.model, path: path)
        let onMain = Locked<[Bool]>([])
        disk.storage.accessProbe.withLock { $0 = { onMain.withLock { $0.append(MainQueueProbe.isCurrent) } } }
        let chain = Chain(terminal: store) { disk }
        let albums = FetchRequest(
            entity: "Album", predicate: try FetchPredicate(format: "year > 1970"),
            sortDescriptors: [FetchSortDescriptor("title")])

        #expect(MainQueueProbe.isCurrent, "the test itself runs on the main queue")
        let miss = try await chain.send(.fetch(albums))
        let hit = try await chain.send(.fetch(albums))
        guard case .objects(let albumsFound) = try hit.fetchResult(), let first = albumsFound.first else {
            throw Failure("no albums answered")
        }
        let fault = try await chain.send(.objectFault(first.id))
        #expect(MainQueueProbe.isCurrent, "the answers come back to the main actor")

        #expect(miss.info.origin != .disk)
        #expect(hit.info.origin == .disk && fault.info.origin == .disk, "\(hit.info) \(fault.info)")
        let places = onMain.withLock { $0 }
        #expect(places.count >= 4, "reads and a write were probed: \(places)")
        #expect(!places.contains(true), "no SQLite access on the main queue: \(places)")
    }

    @MainActor @Test func aMemoryCacheHitStaysOnTheMainActor() async throws {
        MainQueueProbe.mark()
        let store = try MusicFixture.store()
        let storage = ProbedMemoryStorage()
        let chain = Chain(terminal: store) {
            CacheHandler(name: "memory-cache", model: store.model, storage: storage)
        }
        let bands = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])
        _ = try await chain.send(.fetch(bands))
        storage.onMain.withLock { $0 = [] }

        let hit = try await chain.send(.fetch(bands))
        let fault = try await chain.send(.objectFault(ObjectID(entity: "Band", key: 1)))

        #expect(hit.info.origin == .memory && fault.info.origin == .memory, "\(hit.info) \(fault.info)")
        let places = storage.onMain.withLock { $0 }
        #expect(!places.isEmpty && !places.contains(false), "every storage call on the main queue: \(places)")
    }
}

/// Memory storage that records, for each call, whether it ran on the main queue.
private final class ProbedMemoryStorage: CacheStorage {
    let inner = MemoryCacheStorage()
    let onMain = Locked<[Bool]>([])

    var origin: ResponseInfo.Origin { inner.origin }

    private func probe() { onMain.withLock { $0.append(MainQueueProbe.isCurrent) } }

    func queries(shape: String) async throws -> [CachedQuery] {
        probe()
        return await inner.queries(shape: shape)
    }
    func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] {
        probe()
        return await inner.nodes(ids)
    }
    func collection(_ entity: String) async throws -> Freshness? {
        probe()
        return await inner.collection(entity)
    }
    func nodes(of entity: String, matching predicate: FetchPredicate?) async throws -> [Node] {
        probe()
        return await inner.nodes(of: entity, matching: predicate)
    }
    func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        probe()
        return await inner.write(write)
    }
    func refresh(_ target: CacheTarget, freshness: Freshness) async throws {
        probe()
        await inner.refresh(target, freshness: freshness)
    }
    func clear() async throws {
        probe()
        await inner.clear()
    }
}
