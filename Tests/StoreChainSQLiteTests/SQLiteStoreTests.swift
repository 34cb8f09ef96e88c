import Foundation
import GRDB
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// The SQLite store terminal: saves persist, answers equal the in-memory reference, and a
/// damaged file is reported, never rebuilt.
@Suite struct SQLiteStoreTests {
    let model: ObjectModel
    let seed: [Node]
    let path: String

    init() throws {
        model = try MusicFixture.model()
        seed = try MusicFixture.store().snapshot.allNodes(model: model)
        path = TemporaryFolder.make("storechain-store").appending(path: "music.sqlite").path
    }

    /// A save touching every kind of change, including both sides of relationships.
    var mixedSave: SaveChanges {
        let band = Node(id: .temporary(entity: "Band"), attributes: ["name": "Grouper", "country": "US"])
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "Shade", "year": 2021],
            relationships: ["band": .toOne(band.id)])
        return SaveChanges(
            inserted: [album, band],
            updated: [
                Node(id: id("Album", 21), attributes: ["year": 2006], relationships: ["band": .toOne(id("Band", 1))])
            ],
            deleted: [id("Track", 300)])
    }

    var requests: [StoreChain.FetchRequest] {
        get throws {
            [
                FetchRequest(entity: "Band"),
                FetchRequest(entity: "Album"),
                FetchRequest(entity: "Album", predicate: try FetchPredicate("band.name == 'Rue Royale'")),
                FetchRequest(entity: "Track", sortDescriptors: [FetchSortDescriptor("seconds", ascending: false)]),
                FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count > 1"), resultType: .count),
            ]
        }
    }

    /// The key of a deleted object is not handed out again, after a restart either.
    @Test func aDeletedObjectsKeyIsNotReusedAfterReopening() throws {
        let first = Node(id: .temporary(entity: "Band"), attributes: ["name": "Short-lived"])
        let firstID: ObjectID
        do {
            let store = try SQLiteStore(path: path, model: model, seed: seed)
            firstID = try #require(try store.save(SaveChanges(inserted: [first])).permanentIDs[first.id])
            _ = try store.save(SaveChanges(deleted: [firstID]))
        }
        let reopened = try SQLiteStore(path: path, model: model)
        let second = Node(id: .temporary(entity: "Band"), attributes: ["name": "Next"])
        let secondID = try #require(try reopened.save(SaveChanges(inserted: [second])).permanentIDs[second.id])
        guard case .integer(let before)? = firstID.key, case .integer(let after)? = secondID.key else {
            Issue.record("integer keys expected: \(firstID), \(secondID)")
            return
        }
        #expect(after == before + 1)
    }

    @Test func savesSurviveReopeningAndAnswersEqualTheInMemoryStore() throws {
        let reference = InMemoryStore(model: model, nodes: seed)
        let saved: SaveResult
        do {
            let store = try SQLiteStore(path: path, model: model, seed: seed)
            saved = try store.save(mixedSave)
            #expect(
                try reference.save(mixedSave).permanentIDs.values.sorted { "\($0)" < "\($1)" }
                    == saved.permanentIDs.values.sorted { "\($0)" < "\($1)" })
        }
        let reopened = try SQLiteStore(path: path, model: model)
        #expect(reopened.count == reference.snapshot.count)
        for request in try requests {
            #expect(try reopened.fetch(request) == reference.fetch(request), "\(request)")
        }
        for node in saved.nodes {
            #expect(reopened.node(for: node.id) == node, "\(node.id)")
        }
        #expect(reopened.node(for: id("Track", 300)) == nil)
        #expect(reopened.node(for: id("Band", 1))?.relationships["albums"]?.objectIDs.contains(id("Album", 21)) == true)
    }

    @Test func aRejectedSaveChangesNeitherTheFileNorTheObjects() throws {
        let store = try SQLiteStore(path: path, model: model, seed: seed)
        let before = try store.fetch(FetchRequest(entity: "Album"))
        let bad = SaveChanges(
            inserted: [Node(id: .temporary(entity: "Band"), attributes: ["name": "Fine"])],
            updated: [Node(id: id("Album", 10), attributes: ["year": "x"])])
        #expect(throws: StoreChainError.self) { try store.save(bad) }
        #expect(try store.fetch(FetchRequest(entity: "Album")) == before)
        #expect(try SQLiteStore(path: path, model: model).count == seed.count)
    }

    @Test func aSaveThatCannotBeWrittenIsNotApplied() throws {
        let store = try SQLiteStore(path: path, model: model, seed: seed, busyTimeout: .milliseconds(50))
        // Another process holds the file's write lock past the busy timeout: the commit fails,
        // and the objects must not run ahead of the file.
        let holder = try DatabaseQueue(path: path)
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? holder.inTransaction(.exclusive) { _ in
                locked.signal()
                release.wait()
                return .rollback
            }
        }
        locked.wait()
        defer { release.signal() }
        let change = SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 2011])])
        let error = #expect(throws: StoreChainError.self) { try store.save(change) }
        #expect(error?.code == .storeFile, "\(String(describing: error))")
        #expect(error?.description.contains(path) == true)
        #expect(store.node(for: id("Album", 10))?[attribute: "year"] == 2010)
    }

    @Test func updatesKeepTheirPlaceInUnsortedFetchesAfterARestart() throws {
        let order: FetchResult
        let bands = FetchRequest(entity: "Band", resultType: .objectIDs)
        do {
            let store = try SQLiteStore(path: path, model: model, seed: seed)
            _ = try store.save(SaveChanges(updated: [Node(id: id("Band", 1), attributes: ["name": "Rue Royale!"])]))
            order = try store.fetch(bands)
        }
        #expect(try SQLiteStore(path: path, model: model).fetch(bands) == order)
    }

    @Test func theSeedFillsOnlyANewStore() throws {
        do {
            let store = try SQLiteStore(path: path, model: model, seed: seed)
            _ = try store.save(SaveChanges(deleted: [id("Track", 300)]))
        }
        let reopened = try SQLiteStore(path: path, model: model, seed: seed)
        #expect(reopened.count == seed.count - 1)
    }

    @Test func theFileIsOwnerOnly() throws {
        _ = try SQLiteStore(path: path, model: model)
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test func aDamagedFileIsReportedAndLeftInPlace() throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x5A, count: 8_192)
        try garbage.write(to: URL(filePath: path))
        let error = #expect(throws: StoreChainError.self) { try SQLiteStore(path: path, model: model) }
        #expect(error?.code == .storeFile)
        #expect(error?.description.contains("restore it from a backup") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(filePath: path)) == garbage, "the file is never moved or rewritten")
    }

    @Test func anObjectHoldingAValueOfTheWrongTypeIsReportedNotTrappedOn() throws {
        _ = try SQLiteStore(path: path, model: model, seed: seed)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE objects SET payload = 42 WHERE rowid = 2") }
        try queue.close()
        let error = #expect(throws: StoreChainError.self) { try SQLiteStore(path: path, model: model) }
        #expect(error?.code == .storeFile)
        #expect(error?.message.contains("cannot be read") == true, "\(String(describing: error))")
    }

    @Test func anotherSchemaVersionIsRefused() throws {
        _ = try SQLiteStore(path: path, model: model, seed: seed)
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA user_version = 7") }
        try queue.close()
        let error = #expect(throws: StoreChainError.self) { try SQLiteStore(path: path, model: model) }
        #expect(error?.code == .storeFile)
        #expect(error?.message.contains("it has version 7") == true, "\(String(describing: error))")
    }

    @Test func aChainSavesThroughItAndReadsBackAfterARestart() async throws {
        do {
            let store = try SQLiteStore(path: path, model: model, seed: seed)
            let context = ObjectContext(chain: Chain(handlers: [], terminal: store), model: model)
            let band = try context.insert("Band", values: ["name": "Low Roar"])
            try await context.save()
            #expect(band.objectID.key != nil)
        }
        let store = try SQLiteStore(path: path, model: model)
        let response = try await Chain(handlers: [], terminal: store).send(
            .fetch(
                FetchRequest(entity: "Band", predicate: try FetchPredicate("name == 'Low Roar'"), resultType: .count)))
        #expect(try response.fetchResult() == .count(1))
        #expect(response.info.answeredBy == "sqlite" && response.info.origin == .localStore)
    }
}
