import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import Testing

/// The remote adapter weighs the ways to read an endpoint relationship for many owners
/// (`Album.tracks` through `GET /albums/{id}/tracks`, one request or more per album, against the
/// whole `GET /tracks` listing grouped by `album_id`) once it knows how many pages the listing
/// has, and `explain` shows the options with their costs.
@Suite struct RelatedReadPlanningTests {
    private let backendTests = DemoBackendTests()

    /// A new chain: a memory cache (empty at first) and a pager over the v3 API.
    private func chain(base: URL, model: Model) throws -> (Chain, RemoteResponder) {
        let remote = try RemoteResponder(model: model, options: DemoRemoteOptions.v3(baseURL: base))
        let chain = Chain(
            handlers: [
                MemoryCache(model: model), PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
            ], terminal: remote)
        return (chain, remote)
    }

    @Test func aKnownListingSmallerThanOneRequestPerOwnerIsReadInstead() async throws {
        try await backendTests.withBackend { backend, base in
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@count > 12"))
            let expected = backendTests.comparable(try backend.store.fetch(request))
            let albums = backend.store.snapshot.nodes(of: "Album").count
            let trackPages = (backend.store.snapshot.nodes(of: "Track").count + 99) / 100
            #expect(trackPages < albums, "the catalog must make the listing the cheaper way")

            // Given a chain that does not know the track listing's size yet: one list per album.
            let (cold, _) = try chain(base: base, model: backend.model)
            #expect(backendTests.comparable(try await cold.fetch(request)) == expected)
            #expect(backend.stats.requestsByRoute["/v3/albums/{id}/tracks", default: 0] >= albums)
            let coldRequests = backend.stats.requests
            await cold.shutdown()

            // When a chain has read one page of tracks (its `Link: rel="last"` tells the size)…
            backend.resetStats()
            let (warm, remote) = try chain(base: base, model: backend.model)
            var firstTracks = FetchRequest(entity: "Track")
            firstTracks.fetchLimit = 10
            _ = try await warm.fetch(firstTracks)
            let explanation = try remote.explain(request)
            #expect(
                explanation.relatedReads.first?.options.last
                    == "listing: GET /tracks?page={page}&per_page={per_page} grouped by album.id, \(trackPages) page(s)"
            )
            backend.resetStats()
            // Then the same question reads the listing once (the memory cache holds it whole for
            // the second page of albums), not every album's list.
            #expect(backendTests.comparable(try await warm.fetch(request)) == expected)
            #expect(backend.stats.requestsByRoute["/v3/albums/{id}/tracks", default: 0] == 0)
            #expect(backend.stats.requests <= trackPages + (albums + 99) / 100 + 1, "\(backend.stats.requestsByRoute)")
            print(
                "related reads: tracks.@count > 12 over \(albums) albums, \(coldRequests) requests per album,"
                    + " \(backend.stats.requests) through the track listing (\(trackPages) pages)")
            await warm.shutdown()
        }
    }

    @Test func explainListsTheWaysToReadARelationship() async throws {
        let model = try ModelFile.parse(DemoCatalogModel.text)
        let remote = try RemoteResponder(
            model: model, options: DemoRemoteOptions.v3(baseURL: URL(string: "http://127.0.0.1:9")!))
        let explanation = try remote.explain(
            FetchRequest(entity: "Band", predicate: try FetchPredicate("ANY albums.tracks.seconds > 400")))
        #expect(explanation.relatedReads.map(\.relationship) == ["Band.albums", "Album.tracks"])
        let tracks = try #require(explanation.relatedReads.last)
        #expect(tracks.options.contains("per Album: GET /albums/{id}/tracks, 1 request or more for each"))
        #expect(tracks.options.contains { $0.hasPrefix("listing: GET /tracks") && $0.contains("not known") })
        #expect(tracks.choice.contains("one request per Album until the listing's size is known"))
    }
}
