import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// Pagination and batching against the demo backend: page numbers with `Link` headers for bands
/// and tracks, cursors for albums, and 429s and 500s on the way.
@Suite(.serialized) struct PaginationIntegrationTests {
    let backendTests = DemoBackendTests()

    private func fullChain(_ backend: DemoBackend, _ base: URL) throws -> Chain {
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
        return Chain(terminal: remote) {
            LoggingHandler(level: .debug)
            PaginationHandler(model: backend.model, options: .init(pageSize: 25, concurrency: 3))
            RateLimitHandler(options: .init(rate: 100, burst: 10))
            RetryHandler(options: RetryOptions(maxAttempts: 6, baseDelay: .milliseconds(20)))
            BatchingHandler(model: backend.model, options: BatchingOptions(entities: ["Track"]))
        }
    }

    @Test func windowsThroughAFullChainAgreeWithTheStoreDespiteTheQuirks() async throws {
        let quirks = DemoQuirks(latency: .milliseconds(1), rateLimitPerSecond: 80, failEvery: 7)
        try await backendTests.withBackend(quirks: quirks) { backend, base in
            let chain = try fullChain(backend, base)
            var generator = MusicRequestGenerator(seed: 88)
            for _ in 0..<12 {
                let request = try generator.windowRequest()
                #expect(
                    backendTests.comparable(try await chain.fetch(request))
                        == backendTests.comparable(try backend.store.fetch(request)), "\(request)")
            }
            print("windows through a full chain: \(backend.stats.requests) requests, \(backend.stats.requestsByRoute)")
            await chain.shutdown()
        }
    }

    /// A list screen showing three screens of 25 tracks, then the app walking 200 favourite
    /// tracks by ID: requests with and without pagination + batching, and the least possible.
    @Test func aListScreenWorkloadNeedsAHandfulOfRequests() async throws {
        try await backendTests.withBackend { backend, base in
            func workload(_ chain: Chain) async throws -> Int {
                backend.resetStats()
                let context = ObjectContext(chain: chain, model: backend.model)
                for screen in 0..<3 {
                    let tracks = try await context.fetch(
                        FetchRequest(entity: "Track", fetchLimit: 25, fetchOffset: 100 + screen * 25))
                    #expect(tracks.count == 25)
                }
                let favourites = context.objects(
                    with: (1...200).map { ObjectID(entity: "Track", key: .integer($0 * 6)) })
                for track in favourites { _ = try await track.value("title") }
                await chain.shutdown()
                return backend.stats.requests
            }
            let remote = { try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base)) }
            let plain = try await workload(Chain(handlers: [], terminal: try remote()))
            let tuned = try await workload(
                Chain(terminal: try remote()) {
                    PaginationHandler(model: backend.model, options: .init(pageSize: 25))
                    BatchingHandler(model: backend.model, options: BatchingOptions(entities: ["Track"]))
                })
            let minimum = 3 + 2
            print(
                "list-screen workload requests: without pagination + batching \(plain), with \(tuned), least \(minimum)"
            )
            #expect(tuned <= minimum + 2, "pagination + batching: \(tuned) requests")
            #expect(plain > tuned * 10, "without: \(plain) requests")
        }
    }

    @Test func cursorsAndLinkHeadersAreWalkedOnlyAsFarAsTheWindow() async throws {
        try await backendTests.withBackend { backend, base in
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(terminal: remote) {
                PaginationHandler(model: backend.model, options: .init(pageSize: 10))
            }
            let albums = FetchRequest(entity: "Album", fetchLimit: 5, fetchOffset: 23)
            backend.resetStats()
            #expect(
                backendTests.comparable(try await chain.fetch(albums))
                    == backendTests.comparable(try backend.store.fetch(albums)))
            #expect(backend.stats.requestsByRoute["/v2/albums"] == 3, "cursor pages 0-9, 10-19, 20-29")

            let bands = FetchRequest(
                entity: "Band", sortDescriptors: [FetchSortDescriptor("name", ascending: false)], fetchLimit: 4,
                fetchOffset: 12)
            backend.resetStats()
            #expect(
                backendTests.comparable(try await chain.fetch(bands))
                    == backendTests.comparable(try backend.store.fetch(bands)))
            #expect(backend.stats.requestsByRoute["/v2/bands"] == 1, "sorted by the backend: page 2 of 10 only")
        }
    }
}
