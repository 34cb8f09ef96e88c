import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Regression (found by the soak test): a fetch whose predicate the backend applied in full,
/// through a key path (`album.year`), came back empty from the pagination handler, which
/// evaluated the predicate again without the related objects the key path reads.
@Suite struct PagedKeyPathRegressionTests {
    let backendTests = DemoBackendTests()

    /// A pager of 50 (behind a memory cache when `cached`) over the v2 API of a running demo
    /// backend.
    func withPagedChain(cached: Bool = false, _ body: (DemoBackend, Chain) async throws -> Void) async throws {
        try await backendTests.withBackend { backend, base in
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let pager = PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 50))
            let handlers: [any StoreHandler] = cached ? [MemoryCache(model: backend.model), pager] : [pager]
            let chain = Chain(handlers: handlers, terminal: remote)
            try await body(backend, chain)
        }
    }
    @Test func aPredicateTheBackendAppliedIsNotEvaluatedAgainWithoutItsRelatedObjects() async throws {
        try await withPagedChain { backend, chain in
            let request = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.year < 1982 AND id IN {1047, 1250, 900}"),
                sortDescriptors: [FetchSortDescriptor("number")])
            let expected = try backend.store.fetch(request)
            #expect(expected != .objects([]), "the catalog has a match, so an empty answer is wrong")
            #expect(backendTests.comparable(try await chain.fetch(request)) == backendTests.comparable(expected))
        }
    }

    /// Regression (the soak test at 300 operations): sorting by `album.year` in the pager over
    /// an unpaged endpoint's answer came back in key order, because the albums the sort reads
    /// were not passed up with the answer.
    @Test func aSortThroughARelationshipIsNeverComputedWithoutTheRelatedObjects() async throws {
        try await withPagedChain(cached: true) { backend, chain in
            let request = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("id IN {847, 766, 1237}"),
                sortDescriptors: [FetchSortDescriptor("album.year", ascending: false)], fetchLimit: 18)
            let expected = try backend.store.fetch(request)
            let keyOrder = try backend.store.fetch(
                FetchRequest(
                    entity: "Track", predicate: request.predicate, sortDescriptors: [FetchSortDescriptor("id")]))
            #expect(expected != keyOrder, "the catalog orders these tracks differently by album year than by key")
            #expect(backendTests.comparable(try await chain.fetch(request)) == backendTests.comparable(expected))
        }
    }

    /// Regression (the shipped v2 pipeline): a fetch of the tracks of two albums through the
    /// `album_id` endpoint counted 0, since the backend read one number and answered with the
    /// first page of every track. The backend now takes a list; the adapter follows any
    /// `Link: rel="next"` it is given (see `RemoteCompletenessTests`).
    @Test func theTracksOfSeveralAlbumsAreTheirTracks() async throws {
        try await withPagedChain { backend, chain in
            for format in ["album.id == 100", "album.id == 101", "album.id IN {100, 101}"] {
                let request = FetchRequest(entity: "Track", predicate: try FetchPredicate(format), resultType: .count)
                let expected = try backend.store.fetch(request)
                #expect(expected != .count(0), "\(format) has tracks in the catalog")
                #expect(try await chain.fetch(request) == expected, "\(format)")
            }
        }
    }
}
