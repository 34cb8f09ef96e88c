import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// The remote adapter weighs the ways to read related objects for many owners or keys
/// (`Album.tracks` through `GET /albums/{id}/tracks`, one request or more per album, against the
/// whole `GET /tracks` listing grouped by `album_id`; bands one `GET /bands/{id}` each against
/// their listing) by how many pages the listing has — learned from a page, counted in the
/// caches, or found out by reading its first page — and `explain` shows the options with their
/// costs.
@Suite struct RelatedReadPlanningTests {
    private let backendTests = DemoBackendTests()

    /// A new chain: a memory cache (empty at first) and a pager over the v3 API.
    private func chain(base: URL, model: ObjectModel) throws -> (Chain, RemoteResponder) {
        let remote = try RemoteResponder(model: model, options: DemoRemoteOptions.v3(baseURL: base))
        let chain = Chain(
            handlers: [
                MemoryCache(model: model), PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
            ], terminal: remote)
        return (chain, remote)
    }

    @Test func aFreshChainProbesTheListingOnceAndReadsItInsteadOfOneListPerOwner() async throws {
        try await backendTests.withBackend { backend, base in
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@count > 12"))
            let expected = backendTests.comparable(try backend.store.fetch(request))
            let albums = backend.store.snapshot.nodes(of: "Album").count
            let trackPages = (backend.store.snapshot.nodes(of: "Track").count + 99) / 100
            let albumPages = (albums + 99) / 100
            #expect(trackPages * 3 < albums, "the catalog must make the listing the cheaper way")

            // A chain that knows nothing of the track listing's size reads its first page once
            // (`Link: rel="last"` tells the size), then the listing, not one list per album.
            let (chain, remote) = try chain(base: base, model: backend.model)
            let explained = try await remote.explain(request, context: chain.makeContext())
            #expect(explained.relatedReads.first?.options.last?.contains("pages not known") == true)
            #expect(backendTests.comparable(try await chain.fetch(request)) == expected)
            #expect(backend.stats.requestsByRoute["/v3/albums/{id}/tracks", default: 0] == 0)
            #expect(backend.stats.requestsByRoute["/v3/tracks", default: 0] == trackPages + 1)
            #expect(backend.stats.requests == albumPages + trackPages + 1, "\(backend.stats.requestsByRoute)")

            // What it learned, `explain` now shows.
            let known = try await remote.explain(request, context: chain.makeContext())
            #expect(
                known.relatedReads.first?.options.last
                    == "listing: GET /tracks?page={page}&per_page={per_page} filtered by album.id in memory,"
                    + " \(trackPages) page(s) (known from a page this chain read)")
            print(
                "related reads: tracks.@count > 12 over \(albums) albums, \(backend.stats.requests) requests"
                    + " (\(trackPages) pages of tracks, 1 to learn their number, \(albumPages) of albums)")
            await chain.shutdown()
        }
    }

    @Test func aNewProcessTakesTheListingsSizeFromTheCachesWithoutAProbe() async throws {
        try await backendTests.withBackend { backend, base in
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@count > 12"))
            let expected = backendTests.comparable(try backend.store.fetch(request))
            let trackPages = (backend.store.snapshot.nodes(of: "Track").count + 99) / 100
            let clock = ManualClock()
            let storage = MemoryCacheStorage()
            let options = CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(60)), staleIfError: nil)
            func process() throws -> (Chain, RemoteResponder) {
                let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v3(baseURL: base))
                let cache = CacheHandler(name: "cache", model: backend.model, storage: storage, options: options)
                let pager = PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 100))
                return (Chain(handlers: [cache, pager], terminal: remote, clock: clock), remote)
            }
            let (first, _) = try process()
            _ = try await first.fetch(FetchRequest(entity: "Track"))
            await first.shutdown()

            // A new process over the same (now stale) cache: the caches count the collection,
            // so the listing is chosen with no probe, and read again (its data is stale).
            await clock.advance(by: .seconds(120))
            backend.resetStats()
            let (second, remote) = try process()
            let explained = try await remote.explain(request, context: second.makeContext(cachePolicy: .cacheOnly))
            #expect(explained.relatedReads.first?.options.last?.contains("counted in the caches' copy") == true)
            #expect(backend.stats.requests == 0, "explain sends nothing: \(backend.stats.requestsByRoute)")
            #expect(backendTests.comparable(try await second.fetch(request)) == expected)
            #expect(backend.stats.requestsByRoute["/v3/albums/{id}/tracks", default: 0] == 0)
            #expect(backend.stats.requestsByRoute["/v3/tracks", default: 0] == trackPages)
            await second.shutdown()
        }
    }

    @Test func objectsByKeyComeFromAnUnpagedListingRatherThanOneGetEach() async throws {
        // A `Genre`-like shape: a small collection with a get endpoint and an unpaged listing.
        try await backendTests.withBackend { backend, base in
            var options = DemoRemoteOptions.v3(baseURL: base)
            var band = try #require(options.entities["Band"])
            band.fetch = band.fetch.filter { $0.paging != nil }.map { endpoint in
                var unpaged = endpoint
                unpaged.paging = nil
                unpaged.request = "GET /bands?page=1&per_page=100"
                return unpaged
            }
            options.entities["Band"] = band
            let remote = try RemoteResponder(model: backend.model, options: options)
            let chain = Chain(
                handlers: [
                    MemoryCache(model: backend.model),
                    PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 100)),
                ], terminal: remote)
            let request = FetchRequest(
                entity: "Album", predicate: try FetchPredicate("band.name BEGINSWITH 'T' OR year < 1980"))
            let expected = backendTests.comparable(try backend.store.fetch(request))
            let explained = try await remote.explain(request, context: chain.makeContext())
            let bands = try #require(explained.relatedReads.first)
            #expect(bands.relationship == "Album.band")
            #expect(bands.options.contains("per id: GET /bands/{id}, 1 request for each"))
            #expect(bands.options.last?.hasSuffix("1 page(s) (one document (the endpoint does not page))") == true)
            #expect(backendTests.comparable(try await chain.fetch(request)) == expected)
            #expect(
                backend.stats.requestsByRoute["/v3/bands/{id}", default: 0] == 0, "\(backend.stats.requestsByRoute)")
            #expect(backend.stats.requestsByRoute["/v3/bands", default: 0] == 1)
            await chain.shutdown()
        }
    }

    @Test func explainListsTheWaysToReadARelationship() async throws {
        let model = try ModelFile.parse(DemoCatalogModel.text)
        let remote = try RemoteResponder(
            model: model, options: DemoRemoteOptions.v3(baseURL: URL(string: "http://127.0.0.1:9")!))
        let explanation = try await remote.explain(
            FetchRequest(entity: "Band", predicate: try FetchPredicate("ANY albums.tracks.seconds > 400")))
        #expect(explanation.relatedReads.map(\.relationship) == ["Band.albums", "Album.tracks"])
        let tracks = try #require(explanation.relatedReads.last)
        #expect(tracks.options.contains("per Album: GET /albums/{id}/tracks, 1 request or more for each"))
        #expect(tracks.options.contains { $0.hasPrefix("listing: GET /tracks") && $0.contains("not known") })
        #expect(tracks.choice.contains("else the listing when it has fewer pages than there are Album objects"))
    }
}
