import Foundation
import GRDB
@_spi(Internals) import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// A filter over a to-one's key (`Album where band.id == 2`, how a relationship fault is
/// answered from a complete collection) makes an index of the relationship's targets, which
/// SQLite then reads instead of every payload; the file with it reopens as it was.
@Suite struct TargetIndexTests {
    let model = try! MusicFixture.model()

    private func storage(at path: String) async throws -> SQLiteCacheStorage {
        try await SQLiteCacheStorage.holdingTheFixtureCatalog(at: path, model: model)
    }

    private func albums(of band: Int, in storage: SQLiteCacheStorage) async throws -> Set<ObjectID> {
        let bound = try CompiledPredicate(FetchPredicate(format: "band.id == \(band)"), entity: "Album", model: model)
        return Set(try await storage.nodes(of: "Album", matching: bound.predicate).map(\.id))
    }

    private func expected(band: Int) throws -> Set<ObjectID> {
        let request = FetchRequest(entity: "Album", predicate: try FetchPredicate(format: "band.id == \(band)"))
        guard case .objects(let nodes) = try MusicFixture.store().fetch(request) else { throw Failure("objects") }
        return Set(nodes.map(\.id))
    }

    @Test(arguments: ["band.id == 2", "band.id IN {1, 2}", "band.id IN {1, 2, 3} AND year > 1990"])
    func aFilterOverAToOnesKeyIsServedByAnIndexMadeOnFirstUse(format: String) async throws {
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        let storage = try await storage(at: path)
        let name = SQLiteCacheStorage.targetIndexName(entity: "Album", relationship: "band")
        let before = try storage.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master") }
        #expect(!before.contains(name), "no index before a filter needs it")
        let bound = try CompiledPredicate(FetchPredicate(format: format), entity: "Album", model: model)
        let request = FetchRequest(entity: "Album", predicate: try FetchPredicate(format: format))
        guard case .objects(let expected) = try MusicFixture.store().fetch(request) else { throw Failure("objects") }
        let found = try await storage.nodes(of: "Album", matching: bound.predicate).filter {
            bound.evaluate($0)
        }
        #expect(Set(found.map(\.id)) == Set(expected.map(\.id)))
        // The query exactly as the storage sends it: every part of it reads the index (with no
        // statistics, SQLite would otherwise take the entity's index for a list of keys).
        let selection = NodeSelection(of: "Album", matching: bound.predicate, model: model)
        let plan = try storage.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + selection.sql, arguments: selection.arguments)
                .map { row -> String in try row.decode(String.self, forColumn: "detail") }
        }
        let reads = plan.filter { $0.hasPrefix("SEARCH") || $0.hasPrefix("SCAN") }
        #expect(!reads.isEmpty && reads.allSatisfy { $0.contains(name) }, "\(plan)")
    }

    /// The index follows writes: an album moved to another band leaves the first one's answer.
    @Test func anObjectMovedElsewhereLeavesTheIndexedAnswer() async throws {
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        let storage = try await storage(at: path)
        let first = try await albums(of: 1, in: storage)
        let moved = try #require(first.sorted { $0.description < $1.description }.first)
        let cached = try #require(try await storage.nodes([moved])[moved])
        var write = CacheWrite()
        var node = cached
        node.relationships["band"] = .toOne(ObjectID(entity: "Band", key: .integer(3)))
        write.nodes = [node]
        _ = try await storage.write(write)
        #expect(try await albums(of: 1, in: storage) == first.subtracting([moved]))
        #expect(try await albums(of: 3, in: storage).contains(moved))
    }

    /// A payload damaged after the index was made is matched by every filter over the index, so
    /// reading finds and drops it (its row can be deleted: the index never fails on it), and it
    /// is never left silently out of an answer.
    @Test func aDamagedPayloadIsFoundAndDroppedNotLeftOut() async throws {
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        let storage = try await storage(at: path)
        let first = try await albums(of: 1, in: storage)
        let damaged = try #require(first.sorted { $0.description < $1.description }.first)
        try storage.modify { db in
            try db.execute(
                sql: "UPDATE nodes SET payload = x'0102', compressed = 0, raw_size = 2 WHERE id = ?",
                arguments: [try StoredNode.key(for: damaged)])
        }
        await #expect(throws: StoreChainError.self, "the damaged album is met, not skipped") {
            try await albums(of: 1, in: storage)
        }
        #expect(try await albums(of: 1, in: storage) == first.subtracting([damaged]), "and it was deleted")
    }

    /// A file holding such an index opens again as it is (the schema check knows it), and one
    /// whose index definition was damaged is rebuilt.
    @Test func theIndexPassesTheSchemaCheckAndADamagedOneIsRebuilt() async throws {
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        _ = try await albums(of: 2, in: try await storage(at: path))
        let log = CapturedLog()
        let reopened = SQLiteCacheStorage(path: path, model: model, logger: log.logger())
        #expect(try await albums(of: 2, in: reopened) == (try expected(band: 2)))
        #expect(!log.text.contains("rebuilding"), "\(log.text)")
        let name = SQLiteCacheStorage.targetIndexName(entity: "Album", relationship: "band")
        try reopened.modify { db in
            try db.execute(sql: "PRAGMA writable_schema = ON")
            try db.execute(
                sql: "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = ?",
                arguments: ["'band'", "'bnad'", name])
        }
        let damagedLog = CapturedLog()
        let again = SQLiteCacheStorage(path: path, model: model, logger: damagedLog.logger())
        #expect(damagedLog.text.contains("not the ones this version writes"), "\(damagedLog.text)")
        #expect(try await again.nodes(of: "Album", matching: nil).isEmpty, "rebuilt empty")
    }
}

extension SQLiteCacheStorage {
    /// A disk storage at `path` holding the fixture catalog, fresh.
    static func holdingTheFixtureCatalog(at path: String, model: ObjectModel) async throws -> SQLiteCacheStorage {
        let storage = SQLiteCacheStorage(path: path, model: model)
        var write = CacheWrite()
        let snapshot = try MusicFixture.store().snapshot
        write.nodes = model.entities.flatMap { snapshot.nodes(of: $0.name) }.map { node in
            var node = node
            node.freshness = Freshness(expiresAt: .distantFuture)
            return node
        }
        _ = try await storage.write(write)
        return storage
    }
}
