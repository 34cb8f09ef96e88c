import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A window of a count query (`Band where albums.@count >= 1`) held by the caches, and a save
/// that changes the count through the other side of the relationship.
@Suite struct SavedCountWindowTests {
    let backendTests = DemoBackendTests()

    @Test(arguments: ["memory", "disk", "memory+disk"])
    func anAlbumSavedForANewBandBringsTheBandIntoTheCountWindow(caches: String) async throws {
        try await backendTests.withBackend(bands: 3) { backend, base in
            let path = TemporaryFolder.make("storechain").appending(path: "cache.sqlite").path
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            var handlers: [any StoreHandler] = []
            if caches.contains("memory") { handlers.append(MemoryCache(model: backend.model)) }
            if caches.contains("disk") { handlers.append(DiskCache(model: backend.model, path: path)) }
            handlers.append(PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 100)))
            let chain = Chain(handlers: handlers, terminal: remote)
            let first = ObjectContext(chain: chain, model: backend.model)
            let second = ObjectContext(chain: chain, model: backend.model)
            let band = try first.insert("Band", values: ["name": "New band", "country": "SE"])
            try await first.save()
            let query = try TestData.fetch(
                "Band", where: "albums.@count >= 1",
                sort: [FetchSortDescriptor("country", ascending: false), FetchSortDescriptor("id")],
                limit: 8)
            let before = try await first.fetch(query).map(\.objectID)
            #expect(!before.contains(band.objectID), "no album names the new band yet")
            let album = try second.insert("Album", values: ["title": "New album", "year": 1993])
            try album.setRelated(second.object(with: band.objectID), for: "band")
            try await second.save()
            await first.mergePublishedChanges()
            guard case .objects(let nodes) = try backend.store.fetch(query) else {
                Issue.record("the store answers objects")
                return
            }
            let expected = nodes.map(\.id)
            #expect(expected.contains(band.objectID), "the backend counts the new album")
            #expect(try await first.fetch(query).map(\.objectID) == expected, "\(caches)")
            await chain.shutdown()
        }
    }
}
