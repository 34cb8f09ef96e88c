import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// Node rows are bound to the insert with SQLite's C interface (`SQLiteCacheStorage.insert`):
/// every column reads back as written, NULL and empty text kept apart, payloads plain and
/// compressed, and a second write of a node replaces the first.
@Suite struct NodeRowTests {
    let model = try! MusicFixture.model()

    static let freshnesses: [Freshness] = [
        Freshness(),
        Freshness(
            fetchedAt: Date(timeIntervalSince1970: 1_700_000_000.25),
            expiresAt: Date(timeIntervalSince1970: 1_700_000_060),
            validators: Validators(
                etag: "", lastModified: "Mon, 07 Dec 2026 00:00:00 GMT",
                pages: [PageValidator(position: .record(50), size: 50, validators: Validators(etag: "\"p2\""))]),
            rules: ResponseFreshness(lifetime: .seconds(60), mustRevalidate: true, staleIfError: .seconds(5))),
        Freshness(expiresAt: .distantFuture, validators: Validators(etag: "\"é🎸\"")),
    ]

    private func band(_ key: Int, name: String, freshness: Freshness) -> Node {
        var node = Node(
            id: ObjectID(entity: "Band", key: .integer(key)), attributes: ["id": .integer(key), "name": .string(name)])
        node.freshness = freshness
        return node
    }

    @Test(arguments: freshnesses.indices)
    func everyColumnReadsBackAsWritten(index: Int) async throws {
        let freshness = Self.freshnesses[index]
        let storage = SQLiteCacheStorage(
            path: TemporaryFolder.make("storechain").appending(path: "c.sqlite").path, model: model)
        // A short name stays plain; a long one is compressed.
        let plain = band(1, name: "", freshness: freshness)
        let compressed = band(2, name: String(repeating: "Godspeed ", count: 200), freshness: freshness)
        var write = CacheWrite()
        write.nodes = [plain, compressed]
        _ = try await storage.write(write)
        let read = try await storage.nodes([plain.id, compressed.id])
        #expect(read[plain.id] == plain)
        #expect(read[plain.id]?.freshness == freshness)
        #expect(read[compressed.id] == compressed)
        #expect(read[compressed.id]?.freshness == freshness)
        let compressedFlags = try storage.read { db in
            try Bool.fetchAll(db, sql: "SELECT compressed FROM nodes ORDER BY rowid")
        }
        #expect(compressedFlags == [false, true])

        let renamed = band(1, name: "Low", freshness: Self.freshnesses[(index + 1) % Self.freshnesses.count])
        var again = CacheWrite()
        again.nodes = [renamed]
        _ = try await storage.write(again)
        #expect(try await storage.nodes([plain.id])[plain.id] == renamed)
        #expect(try await storage.nodes([plain.id])[plain.id]?.freshness == renamed.freshness)
    }

    /// A complete collection written again replaces the one held: the objects it no longer has
    /// leave the file and are reported removed, also when the write lists one object twice.
    @Test(arguments: [false, true])
    func aCollectionWrittenAgainRemovesWhatItNoLongerHas(listsOneTwice: Bool) async throws {
        let storage = SQLiteCacheStorage(
            path: TemporaryFolder.make("storechain").appending(path: "c.sqlite").path, model: model)
        let fresh = Freshness(expiresAt: .distantFuture)
        let bands = (1...4).map { band($0, name: "Band \($0)", freshness: fresh) }
        var first = CacheWrite()
        first.nodes = bands
        first.collections = ["Band": fresh]
        #expect(try await storage.write(first).isEmpty)
        var second = CacheWrite()
        second.nodes = [bands[0], bands[2], bands[3]] + (listsOneTwice ? [bands[0]] : [])
        second.collections = ["Band": fresh]
        #expect(try await storage.write(second) == [bands[1].id])
        #expect(
            try await storage.nodes(of: "Band", matching: nil).map(\.id) == [bands[0].id, bands[2].id, bands[3].id])
        #expect(try await storage.write(second).isEmpty, "nothing left to remove")
    }
}
