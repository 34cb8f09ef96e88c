import Foundation
import StoreChain
import StoreChainTesting
import Testing

@Suite struct InMemoryStoreSaveTests {
    let store: InMemoryStore

    init() throws {
        store = try Fixtures.store()
    }

    func id(_ entity: String, _ key: Int) -> ObjectID { ObjectID(entity: entity, key: .integer(key)) }

    @Test func insertAssignsKeysAndFillsDefaultsAndInverses() throws {
        let band = Node(id: .temporary(entity: "Band"), attributes: ["name": "Grouper"])
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "Shade"], relationships: ["band": .toOne(band.id)])
        // The child is listed first: new objects may refer to each other in any order.
        let result = try store.save(SaveChanges(inserted: [album, band]))
        #expect(result.permanentIDs == [band.id: id("Band", 5), album.id: id("Album", 32)])
        #expect(store.node(for: id("Band", 5))?.relationships["albums"] == .toMany([id("Album", 32)]))
        #expect(store.node(for: id("Album", 32))?[attribute: "id"] == 32)
        #expect(result.nodes.map(\.id).contains(id("Band", 5)))
    }

    /// A deleted object's key is not handed out again (as SQLite's `AUTOINCREMENT`): a client
    /// that still knew the deleted object would take the new one for it.
    @Test func aNewObjectNeverGetsTheKeyOfADeletedOne() throws {
        let first = Node(id: .temporary(entity: "Band"), attributes: ["name": "Short-lived"])
        let firstID = try #require(try store.save(SaveChanges(inserted: [first])).permanentIDs[first.id])
        #expect(firstID == id("Band", 5))
        _ = try store.save(SaveChanges(deleted: [firstID]))
        let second = Node(id: .temporary(entity: "Band"), attributes: ["name": "Next"])
        #expect(try store.save(SaveChanges(inserted: [second])).permanentIDs[second.id] == id("Band", 6))
        #expect(store.node(for: firstID) == nil)
    }

    @Test func clientAssignedKeysAreKeptAndDuplicatesRejected() throws {
        let tagged = Node(id: .temporary(entity: "Band"), attributes: ["id": 40, "name": "Forty"])
        #expect(try store.save(SaveChanges(inserted: [tagged])).permanentIDs[tagged.id] == id("Band", 40))
        let again = Node(id: .temporary(entity: "Band"), attributes: ["id": 40, "name": "Again"])
        let error = #expect(throws: StoreChainError.self) { try store.save(SaveChanges(inserted: [again])) }
        #expect(error?.message.contains("Band/40 already exists") == true)
    }

    @Test func failuresNameTheObjectAndChangeNothing() throws {
        let before = store.snapshot
        let good = Node(id: .temporary(entity: "Band"), attributes: ["name": "Fine"])
        let cases: [(SaveChanges, String)] = [
            (
                SaveChanges(inserted: [good, Node(id: .temporary(entity: "Band"), attributes: [:])]),
                "required attribute 'name' cannot be nil"
            ),
            (
                SaveChanges(inserted: [good], updated: [Node(id: id("Album", 10), attributes: ["year": "x"])]),
                "attribute 'year' is integer"
            ),
            (
                SaveChanges(inserted: [good], updated: [Node(id: id("Album", 10), attributes: ["yaer": 1])]),
                "has no attribute 'yaer'"
            ),
            (SaveChanges(inserted: [good], deleted: [id("Band", 77)]), "deleted[0]: Band/77 does not exist"),
            (
                SaveChanges(
                    inserted: [good], updated: [Node(id: id("Album", 10), relationships: ["band": .toOne(nil)])]),
                "required relationship 'band' would be empty"
            ),
            (
                SaveChanges(
                    inserted: [good],
                    updated: [Node(id: id("Album", 10), relationships: ["band": .toOne(id("Band", 9))])]),
                "refers to Band/9, which does not exist"
            ),
            (SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["id": 99])]), "the key 'id' cannot change"),
            (
                SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 1], version: "7")]),
                "was changed by someone else"
            ),
        ]
        for (changes, fragment) in cases {
            let error = #expect(throws: StoreChainError.self) { try store.save(changes) }
            // A save based on an old version is a conflict, which the outbox's policy resolves.
            #expect(error?.code == (fragment == "was changed by someone else" ? .conflict : .saveFailed))
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "") should contain \(fragment)")
            #expect(store.snapshot.nodes(of: "Band") == before.nodes(of: "Band"))
            #expect(store.snapshot.nodes(of: "Album") == before.nodes(of: "Album"))
        }
    }

    @Test func deletingNullifiesTheOtherSide() throws {
        let result = try store.save(SaveChanges(deleted: [id("Album", 20)]))
        #expect(result.deleted == [id("Album", 20)])
        #expect(store.node(for: id("Band", 2))?.relationships["albums"] == .toMany([id("Album", 21)]))
        #expect(store.node(for: id("Track", 200))?.relationships["album"] == .toOne(nil))
        #expect(result.nodes.map(\.id).contains(id("Band", 2)))
    }

    @Test func movingAToManyMemberUpdatesAllThreeObjects() throws {
        let result = try store.save(
            SaveChanges(updated: [
                Node(
                    id: id("Band", 1),
                    relationships: ["albums": .toMany([id("Album", 10), id("Album", 11), id("Album", 30)])])
            ]))
        #expect(store.node(for: id("Album", 30))?.relationships["band"] == .toOne(id("Band", 1)))
        #expect(store.node(for: id("Band", 3))?.relationships["albums"] == .toMany([id("Album", 31)]))
        #expect(Set(result.nodes.map(\.id)) == [id("Band", 1), id("Band", 3), id("Album", 30)])
        #expect(store.node(for: id("Band", 1))?.version == "1")
    }

    @Test func respondsToEveryRequestKind() async throws {
        let context = RequestContext()
        let fault = try await store.respond(to: .objectFault(id("Band", 1)), context: context)
        #expect(try fault.objectNode()?[attribute: "name"] == "Rue Royale")
        #expect(fault.info.origin == .localStore)
        #expect(try await store.respond(to: .objectFault(id("Band", 9)), context: context).objectNode() == nil)
        let tracks = try await store.respond(
            to: .relationshipFault(id("Album", 10), relationship: "tracks"), context: context)
        #expect(try tracks.relationshipValue() == .toMany([id("Track", 100), id("Track", 101)]))
        #expect(tracks.related.map(\.id) == [id("Track", 100), id("Track", 101)])
        await #expect(throws: StoreChainError.self) {
            try await store.respond(to: .relationshipFault(id("Album", 10), relationship: "trakcs"), context: context)
        }
        let prefetched = try await store.respond(
            to: .fetch(
                FetchRequest(
                    entity: "Band", predicate: FetchPredicate("id == 2"),
                    relationshipKeyPathsForPrefetching: ["albums.tracks"])),
            context: context)
        #expect(
            Set(prefetched.related.map(\.id)) == [
                id("Album", 20), id("Album", 21), id("Track", 200), id("Track", 201), id("Track", 210),
            ])
    }
}
