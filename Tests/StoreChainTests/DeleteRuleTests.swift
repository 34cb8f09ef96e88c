import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// Deleting an object takes it out of every relationship that holds it (nullify), deletes what a
/// `cascade` relationship holds and refuses what a `deny` relationship forbids, in the context,
/// in the save sent and in other contexts.
@Suite struct DeleteRuleTests {
    /// A backend that answers a save as a REST API does: with the objects it was sent, never the
    /// objects on the other side of a relationship (a DELETE answers 204 and nothing else).
    struct SaysOnlyWhatItWasSent: StoreHandler {
        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            var response = try await next(request, context)
            guard case .save(let changes) = request, case .saved(var result) = response.result else { return response }
            let sent = Set(changes.updated.map(\.id) + changes.inserted.map { result.permanentIDs[$0.id] ?? $0.id })
            result.nodes = result.nodes.filter { sent.contains($0.id) }
            response.result = .saved(result)
            return response
        }
    }

    /// The music fixture's model with delete rules on the band's albums and the album's tracks.
    static func model(albums: RelationshipDescription.DeleteRule, tracks: RelationshipDescription.DeleteRule) throws
        -> ObjectModel
    {
        let base = try MusicFixture.model()
        return try ObjectModel(
            base.entities.map { entity in
                EntityDescription(
                    entity.name, key: entity.key, attributes: entity.attributes,
                    relationships: entity.relationships.map { relationship in
                        var relationship = relationship
                        switch (entity.name, relationship.name) {
                        case ("Band", "albums"): relationship.deleteRule = albums
                        case ("Album", "tracks"): relationship.deleteRule = tracks
                        default: break
                        }
                        return relationship
                    })
            })
    }

    static func chain(
        albums: RelationshipDescription.DeleteRule = .nullify, tracks: RelationshipDescription.DeleteRule = .nullify
    ) throws
        -> (InMemoryStore, Chain)
    {
        let model = try model(albums: albums, tracks: tracks)
        let store = InMemoryStore(model: model, dataset: try MusicFixture.store().snapshot)
        return (store, Chain(handlers: [SaysOnlyWhatItWasSent()], terminal: store))
    }

    /// The issue's case: a band with albums "Keep" and "Drop"; deleting "Drop" left the band's
    /// `albums` with two members in the same context, though the backend held one.
    @Test func aDeletedObjectLeavesItsOwnersRelationshipInTheSameContext() async throws {
        let (store, chain) = try Self.chain()
        let context = ObjectContext(chain: chain, model: store.model)
        let band = try context.insert("Band", values: ["name": "Keepers"])
        let keep = try context.insert("Album", values: ["title": "Keep"])
        let drop = try context.insert("Album", values: ["title": "Drop"])
        try keep.setRelated(band, for: "band")
        try drop.setRelated(band, for: "band")
        try await context.save()
        #expect(try await band.relatedObjects("albums").count == 2)

        context.delete(drop)
        #expect(try await band.relatedObjects("albums") == [keep], "a pending deletion is gone to the app already")
        try await context.save()

        #expect(try await band.relatedObjects("albums") == [keep])
        #expect(store.node(for: band.objectID)?.relationships["albums"] == .toMany([keep.objectID]))
        let count = try await context.count(
            for: FetchRequest(entity: "Album", predicate: FetchPredicate("band.id == %@", band.objectID.key ?? .null)))
        #expect(count == 1)
        let fresh = ObjectContext(chain: chain, model: store.model)
        #expect(try await fresh.object(with: band.objectID).relatedObjects("albums").map(\.objectID) == [keep.objectID])
    }

    @Test func aDeletedToOneTargetLeavesItsHolderEmpty() async throws {
        let (store, chain) = try Self.chain()
        let context = ObjectContext(chain: chain, model: store.model)
        let album = context.object(with: ObjectID(entity: "Album", key: 31))
        let band = try #require(try await album.related("band"))
        _ = try await band.relatedObjects("albums")
        let track = context.object(with: ObjectID(entity: "Track", key: 300))
        #expect(try await track.related("album")?.objectID == ObjectID(entity: "Album", key: 30))

        context.delete(context.object(with: ObjectID(entity: "Album", key: 30)))
        #expect(try await track.related("album") == nil)
        try await context.save()
        #expect(try await track.related("album") == nil)
        #expect(try await band.relatedObjects("albums") == [album])
    }

    /// Another context's deletion reaches this one through the change event, with the same rule.
    @Test func anotherContextsDeletionLeavesTheRelationshipsHere() async throws {
        let (store, chain) = try Self.chain()
        let mine = ObjectContext(chain: chain, model: store.model)
        let band = mine.object(with: ObjectID(entity: "Band", key: 2))
        #expect(try await band.relatedObjects("albums").count == 2)

        let other = ObjectContext(chain: chain, model: store.model)
        other.delete(other.object(with: ObjectID(entity: "Album", key: 21)))
        try await other.save()
        await mine.mergePublishedChanges()
        #expect(try await band.relatedObjects("albums").map(\.objectID) == [ObjectID(entity: "Album", key: 20)])
    }

    /// A change that names the deleted object in a relationship is not sent with it.
    @Test func aPendingChangeThatNamesTheDeletedObjectDoesNotSendIt() async throws {
        let (store, chain) = try Self.chain()
        let context = ObjectContext(chain: chain, model: store.model)
        let band = context.object(with: ObjectID(entity: "Band", key: 1))
        let other = context.object(with: ObjectID(entity: "Album", key: 20))
        try band.setRelatedObjects(
            [context.object(with: ObjectID(entity: "Album", key: 10)), other], for: "albums")
        context.delete(other)
        try await context.save()
        #expect(store.node(for: ObjectID(entity: "Album", key: 20)) == nil)
        #expect(
            store.node(for: ObjectID(entity: "Band", key: 1))?.relationships["albums"]?.objectIDs.sorted {
                $0.description < $1.description
            } == [ObjectID(entity: "Album", key: 10)])
        #expect(try await band.relatedObjects("albums").map(\.objectID) == [ObjectID(entity: "Album", key: 10)])
    }

    /// Nullify would leave a known album without the band it requires: the save is refused
    /// before anything is sent, as Core Data's validation refuses it.
    @Test func nullifyThatWouldEmptyARequiredToOneIsRefused() async throws {
        let (store, chain) = try Self.chain()
        let context = ObjectContext(chain: chain, model: store.model)
        let band = context.object(with: ObjectID(entity: "Band", key: 1))
        #expect(try await band.relatedObjects("albums").count == 2)
        context.delete(band)
        let error = await #expect(throws: StoreChainError.self) { try await context.save() }
        #expect(error?.code == .saveFailed)
        #expect(
            error?.message
                == "Band/1 cannot be deleted: Album/10, Album/11 require its 'band', which the nullify rule of 'albums' would leave empty"
        )
        #expect(error?.suggestion?.contains("cascade") == true)
        #expect(store.node(for: band.objectID) != nil)

        for album in try await band.relatedObjects("albums") {
            try album.setRelated(context.object(with: ObjectID(entity: "Band", key: 2)), for: "band")
        }
        try await context.save()
        #expect(store.node(for: band.objectID) == nil, "with its albums moved, the band may go")
        #expect(
            store.node(for: ObjectID(entity: "Album", key: 10))?.relationships["band"]
                == .toOne(ObjectID(entity: "Band", key: 2)))
    }

    @Test func cascadeDeletesWhatTheRelationshipHoldsTransitively() async throws {
        let (store, chain) = try Self.chain(albums: .cascade, tracks: .cascade)
        let context = ObjectContext(chain: chain, model: store.model)
        let band = context.object(with: ObjectID(entity: "Band", key: 2))
        let added = try context.insert("Album", values: ["title": "Unsent"])
        try added.setRelated(band, for: "band")
        context.delete(band)
        try await context.save()

        for key in [20, 21] { #expect(store.node(for: ObjectID(entity: "Album", key: .integer(key))) == nil) }
        for key in [200, 201, 210] { #expect(store.node(for: ObjectID(entity: "Track", key: .integer(key))) == nil) }
        #expect(store.snapshot.nodes(of: "Album").count == 4, "the new album went with its band, never sent")
        #expect(!context.hasChanges)
        let remaining = try await context.count(for: FetchRequest(entity: "Track"))
        #expect(remaining == 4)
    }

    @Test func denyRefusesTheDeleteWhileTheRelationshipHoldsAnything() async throws {
        let (store, chain) = try Self.chain(tracks: .deny)
        let context = ObjectContext(chain: chain, model: store.model)
        let album = context.object(with: ObjectID(entity: "Album", key: 11))
        context.delete(album)
        let error = await #expect(throws: StoreChainError.self) { try await context.save() }
        #expect(error?.code == .saveFailed)
        #expect(
            error?.message
                == "Album/11 cannot be deleted: its relationship 'tracks' (delete rule deny) holds Track/110")
        #expect(store.node(for: album.objectID) != nil && album.isDeleted, "nothing was sent or undone")

        context.delete(context.object(with: ObjectID(entity: "Track", key: 110)))
        try await context.save()
        #expect(store.node(for: album.objectID) == nil)
        #expect(store.node(for: ObjectID(entity: "Track", key: 110)) == nil)

        let empty = context.object(with: ObjectID(entity: "Album", key: 31))
        context.delete(empty)
        try await context.save()
        #expect(store.node(for: empty.objectID) == nil, "an album without tracks may go")
    }
}
