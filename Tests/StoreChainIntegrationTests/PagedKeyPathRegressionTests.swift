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
    @Test func aPredicateTheBackendAppliedIsNotEvaluatedAgainWithoutItsRelatedObjects() async throws {
        let backendTests = DemoBackendTests()
        try await backendTests.withBackend { backend, base in
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(terminal: remote) {
                PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 50))
            }
            let request = FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.year < 1982 AND id IN {1047, 1250, 900}"),
                sortDescriptors: [FetchSortDescriptor("number")])
            let expected = try backend.store.fetch(request)
            #expect(expected != .objects([]), "the catalog has a match, so an empty answer is wrong")
            #expect(backendTests.comparable(try await chain.fetch(request)) == backendTests.comparable(expected))
            await chain.shutdown()
        }
    }
}
