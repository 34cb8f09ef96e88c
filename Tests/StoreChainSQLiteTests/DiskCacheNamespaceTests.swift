import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A cache file holds one source's data: opened for another it starts empty, and a process
/// whose source lost the file to another process neither reads nor writes it.
@Suite struct DiskCacheNamespaceTests {
    private static func path() throws -> String {
        let folder = TemporaryFolder.make("storechain-namespace")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appending(path: "cache.sqlite").path
    }

    private static func write(_ title: String, to storage: SQLiteCacheStorage) async throws -> ObjectID {
        var node = TestData.node("Track", 1, ["title": .string(title)])
        node.freshness = Freshness(expiresAt: .distantFuture)
        var write = CacheWrite()
        write.nodes = [node]
        _ = try await storage.write(write)
        return node.id
    }

    @Test func aFileOpenedForAnotherSourceStartsEmpty() async throws {
        let path = try Self.path()
        let id = try await Self.write("from A", to: SQLiteCacheStorage(path: path, namespace: "backend A"))
        let log = CapturedLog()
        let other = SQLiteCacheStorage(path: path, namespace: "backend B", logger: log.logger())
        #expect(try await other.nodes([id]).isEmpty)
        #expect(log.text.contains("held data from backend A; it now caches backend B"), "\(log.text)")
        _ = try await Self.write("from B", to: other)
        let reopened = SQLiteCacheStorage(path: path, namespace: "backend B")
        #expect(try await reopened.nodes([id])[id]?.attributes["title"] == .string("from B"), "its own data stays")
    }

    @Test func aProcessWhoseFileWasTakenOverNeitherReadsNorWritesIt() async throws {
        let path = try Self.path()
        let first = SQLiteCacheStorage(path: path, namespace: "backend A")
        let id = try await Self.write("from A", to: first)
        let second = SQLiteCacheStorage(path: path, namespace: "backend B")
        _ = try await Self.write("from B", to: second)

        let read = await #expect(throws: StoreChainError.self) { try await first.nodes([id]) }
        #expect(read?.code == .cacheFile)
        #expect(
            read?.message.contains("holds data from backend B, not from backend A") == true,
            "\(String(describing: read))")
        await #expect(throws: StoreChainError.self) { _ = try await Self.write("late A", to: first) }
        #expect(try await second.nodes([id])[id]?.attributes["title"] == .string("from B"), "B's data is untouched")
    }

    @Test func withoutANamespaceTheFileIsTakenAsItIs() async throws {
        let path = try Self.path()
        let id = try await Self.write("from A", to: SQLiteCacheStorage(path: path, namespace: "backend A"))
        #expect(try await SQLiteCacheStorage(path: path).nodes([id])[id]?.attributes["title"] == .string("from A"))
    }
}
