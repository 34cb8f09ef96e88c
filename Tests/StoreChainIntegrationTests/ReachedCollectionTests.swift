import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A fetch whose entity's whole collection a cache holds, with a predicate or sort over a key
/// path to entities whose collections it does not hold, is answered by that cache once it has
/// loaded those collections (as sub-requests), never by forwarding the fetch: through the
/// GitHub-style v3 API, `Track where album.title BEGINSWITH "D"` read all the track pages again
/// (and the album pages) although every track was in the disk cache.
@Suite struct ReachedCollectionTests {
    @Test func aCompleteCollectionAnswersAKeyPathFetchByLoadingWhatItReaches() async throws {
        let backendTests = DemoBackendTests()
        let folder = TemporaryFolder.make("storechain-reached")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await backendTests.withBackend(bands: 40) { backend, base in
            let model = backend.model
            let path = folder.appending(path: "cache.sqlite").path
            /// One run of the app: a new chain over the same disk cache.
            func run(_ request: FetchRequest) async throws -> String {
                let remote = try RemoteResponder(model: model, options: DemoRemoteOptions.v3(baseURL: base))
                let chain = Chain(
                    handlers: [
                        MemoryCache(model: model), DiskCache(model: model, path: path),
                        PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
                    ], terminal: remote)
                let result = try await chain.fetch(request)
                await chain.shutdown()
                return backendTests.comparable(result)
            }
            func expected(_ request: FetchRequest) throws -> String {
                backendTests.comparable(try backend.store.fetch(request))
            }
            func pages(_ entity: String) -> Int { (backend.store.snapshot.nodes(of: entity).count + 99) / 100 }

            // A count the backend cannot filter reads every track page and leaves Track whole.
            let long = FetchRequest(entity: "Track", predicate: try FetchPredicate("seconds > 10"), resultType: .count)
            #expect(try await run(long) == expected(long))
            #expect(backend.stats.requests == pages("Track"))

            backend.resetStats()
            let byAlbum = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.title BEGINSWITH 'D'"), resultType: .count)
            #expect(try await run(byAlbum) == expected(byAlbum))
            #expect(backend.stats.requestsByRoute["/v3/tracks", default: 0] == 0, "no track page is read again")
            #expect(backend.stats.requests == pages("Album"), "the albums, once: \(backend.stats.requestsByRoute)")

            // Two hops, objects, sorted by a key path and windowed: the bands are loaded, once.
            backend.resetStats()
            let byBand = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.band.country == 'US'"),
                sortDescriptors: [FetchSortDescriptor("album.title"), FetchSortDescriptor("id")], fetchLimit: 20,
                fetchOffset: 5)
            #expect(try await run(byBand) == expected(byBand))
            #expect(backend.stats.requests == pages("Band"), "\(backend.stats.requestsByRoute)")

            // A to-many step the other way: every collection it reaches is whole now.
            backend.resetStats()
            let byTracks = FetchRequest(entity: "Album", predicate: try FetchPredicate("ANY tracks.seconds > 400"))
            #expect(try await run(byTracks) == expected(byTracks))
            #expect(try await run(byAlbum) == expected(byAlbum))
            #expect(backend.stats.requests == 0, "\(backend.stats.requestsByRoute)")
        }
    }

    /// A whole collection the caches took before another client (or a save racing the fetch)
    /// inserted an object, and a listing read now that points at it: the key-path fetch asks the
    /// backend for what the collection lacks (it failed: "reads Album/… through Track/1, but it
    /// was not loaded"; found by the object-graph test, an observation refetching during a save).
    @Test func objectsAWholeCachedCollectionLacksAreReadPastTheCaches() async throws {
        let backendTests = DemoBackendTests()
        try await backendTests.withBackend(bands: 10) { backend, base in
            let model = backend.model
            let remote = try RemoteResponder(model: model, options: DemoRemoteOptions.v3(baseURL: base))
            let chain = Chain(
                handlers: [
                    MemoryCache(model: model),
                    PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
                ], terminal: remote)
            _ = try await chain.fetch(FetchRequest(entity: "Album"))
            // Elsewhere: a new album, and a track moved to it.
            let album = Node(
                id: .temporary(entity: "Album"), attributes: ["title": "Late", "year": 2031],
                relationships: ["band": .toOne(ObjectID(entity: "Band", key: 1))])
            let saved = try backend.store.save(SaveChanges(inserted: [album]))
            let late = try #require(saved.permanentIDs[album.id])
            _ = try backend.store.save(
                SaveChanges(updated: [
                    Node(id: ObjectID(entity: "Track", key: 1), relationships: ["album": .toOne(late)])
                ]))
            let request = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.year > 2030"),
                sortDescriptors: [FetchSortDescriptor("id")])
            #expect(
                backendTests.comparable(try await chain.fetch(request))
                    == backendTests.comparable(try backend.store.fetch(request)))
            await chain.shutdown()
        }
    }
}
