import Foundation
import GRDB
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// What only the disk cache does: survive restarts, recover from damaged files, rebuild on a
/// schema change, compress, stay owner-only, and really erase.
@Suite struct DiskCacheTests {
    let request = try! TestData.fetch("Album", where: "year >= 2000", sort: [FetchSortDescriptor("year")])

    private func cacheFile(_ harness: CacheHarness) -> String {
        harness.directory.appending(path: "cache.sqlite").path
    }

    /// A second chain on the same file whose backend always fails: it can only answer from disk.
    private func reopened(_ harness: CacheHarness) throws -> CacheHarness {
        let again = try CacheHarness.make(.disk, directory: harness.directory)
        again.backend.update { $0.failure = StoreChainError(.transport, "the network is down") }
        return again
    }

    @Test func answersAfterARestartWithoutTheNetwork() async throws {
        let harness = try CacheHarness.make(.disk) { $0.update { $0.etag = "\"catalog-1\"" } }
        _ = try await harness.fetch(request)
        _ = try await harness.chain.send(.objectFault(ObjectID(entity: "Band", key: 2)))
        let again = try reopened(harness)
        let response = try await again.fetch(request)
        #expect(response.info.origin == .disk)
        #expect(try response.fetchResult() == harness.expected(request))
        let band = try await again.chain.send(.objectFault(ObjectID(entity: "Band", key: 2)))
        #expect(try band.objectNode()?[attribute: "name"] == "Sigur Rós")
        #expect(again.backend.count() == 0)
    }

    @Test func validatorsSurviveARestart() async throws {
        let harness = try CacheHarness.make(.disk, ttl: .seconds(60)) { $0.update { $0.etag = "\"catalog-1\"" } }
        _ = try await harness.fetch(request)
        let again = try CacheHarness.make(.disk, ttl: .seconds(60), directory: harness.directory) {
            $0.update { $0.etag = "\"catalog-1\"" }
        }
        await again.clock.advance(by: .seconds(61))
        let response = try await again.fetch(request)
        #expect(response.cacheStatus == .revalidated)
        #expect(again.backend.state.withLock { $0.validatorsSeen } == ["\"catalog-1\""])
    }

    @Test(arguments: ["garbage", "truncated", "empty"])
    func aDamagedFileIsMovedAsideAndRebuilt(_ damage: String) async throws {
        // The first process is gone when the damage is found (a file another connection still
        // has open is not taken for damage: aFileLockedByAnotherConnectionIsNotTakenForDamage).
        let directory: URL
        do {
            let harness = try CacheHarness.make(.disk)
            _ = try await harness.fetch(request)
            directory = harness.directory
        }
        let path = directory.appending(path: "cache.sqlite").path
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        switch damage {
        case "garbage": try Data(repeating: 0xA5, count: 64 * 1024).write(to: URL(filePath: path))
        case "truncated":
            let bytes = try Data(contentsOf: URL(filePath: path))
            try bytes.prefix(1_000).write(to: URL(filePath: path))
        default: try Data().write(to: URL(filePath: path))
        }
        let again = try CacheHarness.make(.disk, directory: directory)
        let response = try await again.fetch(request)
        #expect(try response.fetchResult() == again.expected(request), "answered from the backend")
        #expect(try await again.fetch(request).cacheStatus == .hit, "and cached in the rebuilt file")
        if damage != "empty" {
            let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(kept.contains { $0.hasPrefix("cache.sqlite.corrupt-") }, "\(kept)")
        }
    }

    @Test func aDirectoryWhereTheFileShouldBeTurnsTheDiskCacheOff() async throws {
        let directory = TemporaryFolder.make("storechain")
        try FileManager.default.createDirectory(
            at: directory.appending(path: "cache.sqlite"), withIntermediateDirectories: true)
        let harness = try CacheHarness.make(.disk, directory: directory)
        #expect(try await harness.fetch(request).fetchResult() == harness.expected(request))
        _ = try await harness.fetch(request)
        #expect(harness.backend.count() == 2, "nothing is cached, and nothing fails")
    }

    /// Regression (seen in CI's log): a file another connection had locked while it was being
    /// set up ("database is locked" while switching to WAL) was taken for damage and moved
    /// aside, taking the other process's cache away. It is used once the lock is gone.
    @Test func aFileLockedByAnotherConnectionIsNotTakenForDamage() async throws {
        let directory = TemporaryFolder.make("storechain")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appending(path: "c.sqlite").path
        var holdsTheLock = Configuration()
        holdsTheLock.allowsUnsafeTransactions = true
        let other = try DatabaseQueue(path: path, configuration: holdsTheLock)
        try await other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN EXCLUSIVE TRANSACTION") }
        let storage = SQLiteCacheStorage(path: path)
        try await other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
        try other.close()

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!files.contains { $0.contains("corrupt") }, "\(files)")
        var write = CacheWrite()
        var node = TestData.node("Track", 1, ["title": "kept"])
        node.freshness = Freshness(expiresAt: .distantFuture)
        write.nodes = [node]
        _ = try await storage.write(write)
        #expect(try await storage.nodes([node.id])[node.id] == node, "the file is used once it is free")
    }

    @Test func anotherSchemaVersionIsRebuilt() async throws {
        let harness = try CacheHarness.make(.disk)
        _ = try await harness.fetch(request)
        let storage = SQLiteCacheStorage(path: cacheFile(harness))
        try storage.setSchemaVersionForTesting(SQLiteCacheStorage.schemaVersion + 1)
        let again = try CacheHarness.make(.disk, directory: harness.directory)
        let response = try await again.fetch(request)
        #expect(response.cacheStatus == .miss, "the old data is gone")
        #expect(try response.fetchResult() == again.expected(request))
        #expect(try await again.fetch(request).cacheStatus == .hit)
    }

    @Test func nodesReadTogetherShareTheirFreshnessWhenItIsTheSame() async throws {
        let folder = TemporaryFolder.make("storechain-shared")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let storage = SQLiteCacheStorage(path: folder.appending(path: "cache.sqlite").path)
        let response = Freshness(fetchedAt: Date(timeIntervalSince1970: 1_000), expiresAt: .distantFuture)
        var write = CacheWrite()
        write.nodes = Node.sharingFreshness(response, (1...3).map { TestData.node("Track", $0) })
        var other = TestData.node("Track", 4)
        other.freshness = Freshness(fetchedAt: Date(timeIntervalSince1970: 2_000), expiresAt: .distantFuture)
        write.nodes.append(other)
        _ = try await storage.write(write)
        let read = try await storage.nodes(of: "Track", matching: nil).sorted { "\($0.id)" < "\($1.id)" }
        #expect(read.map(\.freshness) == write.nodes.map(\.freshness))
        let boxes = read.compactMap(\.sharedFreshness)
        #expect(boxes.count == 4)
        #expect(boxes[0].isSameBox(as: boxes[1]) && boxes[1].isSameBox(as: boxes[2]))
        #expect(!boxes[2].isSameBox(as: boxes[3]))
    }

    @Test func theFileIsOwnerOnly() async throws {
        let harness = try CacheHarness.make(.disk)
        _ = try await harness.fetch(request)
        let attributes = try FileManager.default.attributesOfItem(atPath: cacheFile(harness))
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
    }

    @Test func clearErasesAndShrinksTheFile() async throws {
        let harness = try CacheHarness.make(.disk)
        let storage = SQLiteCacheStorage(path: cacheFile(harness))
        var write = CacheWrite()
        write.nodes = (0..<2_000).map { index in
            var node = TestData.node("Track", 10_000 + index, ["title": .string(String(repeating: "x", count: 200))])
            node.freshness = Freshness(expiresAt: .distantFuture)
            return node
        }
        _ = try await storage.write(write)
        let before = try await storage.statistics()
        #expect(before.objectsByEntity["Track"] == 2_000)
        try await storage.clear()
        let after = try await storage.statistics()
        #expect(after.objectsByEntity.isEmpty)
        #expect(after.storedBytes < before.storedBytes / 4, "\(before.storedBytes) → \(after.storedBytes)")
        let raw = try Data(contentsOf: URL(filePath: cacheFile(harness)))
        #expect(raw.range(of: Data(String(repeating: "x", count: 200).utf8)) == nil)
    }

    /// An app (or `storechain cache`) finds a disk cache by what it can do, scoped or not, sees
    /// what it holds and empties it, without knowing its type; a memory cache beside it is
    /// offered too, as what it is.
    @Test func aDiskCacheIsFoundAsAnInspectableCacheAndClearedThroughIt() async throws {
        let directory = TemporaryFolder.make("storechain")
        let model = try MusicFixture.model()
        let path = directory.appending(path: "c.sqlite").path
        let disk = DiskCache(model: model, file: DiskCacheFile(path: path))
        let chain = Chain(
            handlers: [MemoryCache(model: model), disk.when(kinds: [.fetch])],
            terminal: RecordingResponder(forwardingTo: try MusicFixture.store()), clock: ManualClock())
        _ = try await chain.send(.fetch(request))
        let caches = chain.handlers(of: (any CacheInspecting).self)
        #expect(caches.map(\.location) == ["memory", path], "in chain order")
        let memory = try #require(caches.first)
        #expect(try await memory.statistics().objectsByEntity["Album"] ?? 0 > 0)
        let cache = try #require(caches.last)
        let before = try await cache.statistics()
        #expect(before.objectsByEntity["Album"] ?? 0 > 0 && before.queries == 1, "\(before)")
        try await cache.clear()
        let after = try await cache.statistics()
        #expect(after.objectsByEntity.isEmpty && after.queries == 0, "\(after)")
        await chain.shutdown()
    }

    @Test func aWindowLookupGivesNodesInOrderOrNilWhenOneIsNotCached() async throws {
        let directory = TemporaryFolder.make("storechain")
        let storage = SQLiteCacheStorage(path: directory.appending(path: "c.sqlite").path)
        var write = CacheWrite()
        write.nodes = [1, 2, 3].map { TestData.node("Track", $0, ["title": .string("t\($0)")]) }
        _ = try await storage.write(write)
        let ids = [3, 1, 3, 9].map { ObjectID(entity: "Track", key: .integer($0)) }
        let window = try await storage.nodes(inWindow: ids[..<3], ofQuery: "q")
        #expect(window?.map { $0.attributes["title"] } == ["t3", "t1", "t3"])
        #expect(try await storage.nodes(inWindow: ids[1...], ofQuery: "q") == nil)
    }

    @Test func payloadsAreCompressedWhenThatSavesSpace() async throws {
        let directory = TemporaryFolder.make("storechain")
        let storage = SQLiteCacheStorage(path: directory.appending(path: "c.sqlite").path)
        var write = CacheWrite()
        var node = TestData.node("Track", 1, ["title": .string(String(repeating: "la ", count: 400))])
        node.freshness = Freshness(expiresAt: .distantFuture)
        write.nodes = [node, TestData.node("Track", 2, ["title": "short"])]
        _ = try await storage.write(write)
        let statistics = try await storage.statistics()
        #expect(statistics.payloadBytes < 400, "\(statistics.payloadBytes) bytes for 1,200 characters")
        #expect(try await storage.nodes([node.id])[node.id] == node, "and reads back intact")
    }

    @Test func evictsLeastRecentlyUsedBeyondTheSizeCap() async throws {
        let directory = TemporaryFolder.make("storechain")
        // About a dozen of these nodes fit (each about 80 bytes).
        let storage = SQLiteCacheStorage(path: directory.appending(path: "c.sqlite").path, maxBytes: 1_000)
        func node(_ key: Int) -> Node {
            var node = TestData.node("Track", key, ["title": .string("track \(key) \(UUID())")])
            node.freshness = Freshness(expiresAt: .distantFuture)
            return node
        }
        for key in 0..<10 {
            var write = CacheWrite()
            write.nodes = [node(key)]
            _ = try await storage.write(write)
            if key >= 1 { _ = try await storage.nodes([ObjectID(entity: "Track", key: 0)]) }  // keep 0 in use
        }
        var write = CacheWrite()
        write.nodes = (10..<20).map(node)
        _ = try await storage.write(write)
        let present = try await storage.nodes((0..<20).map { ObjectID(entity: "Track", key: .integer($0)) })
        #expect(try await storage.statistics().payloadBytes <= 1_000)
        #expect(present.count < 20, "some were evicted")
        #expect(present[ObjectID(entity: "Track", key: 0)] != nil, "recently used survives")
        #expect(present[ObjectID(entity: "Track", key: 1)] == nil, "least recently used goes first")
        #expect(present[ObjectID(entity: "Track", key: 19)] != nil)
    }
}
