import Foundation
import MetricsTestKit
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A full chain — logging, metrics, memory cache, rate limit, retry, batching, remote — against
/// the demo backend with its quirks on: slow, rate limited with 429s, failing every few requests.
@Suite(.serialized) struct TrafficIntegrationTests {
    let backendTests = DemoBackendTests()

    /// Every 7th request fails, so a fetch of many pages or related objects only succeeds
    /// because each HTTP call is retried on its own (the retry handler's policy, applied by the
    /// adapter), not the whole fetch.
    @Test func aFullChainAbsorbsTheBackendsQuirksAndAgreesWithTheStore() async throws {
        let quirks = DemoQuirks(latency: .milliseconds(1), rateLimitPerSecond: 40, failEvery: 7)
        try await backendTests.withBackend(quirks: quirks) { backend, base in
            let metrics = TestMetrics()
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(terminal: remote) {
                LoggingHandler(level: .debug)
                MetricsHandler(factory: metrics)
                MemoryCache(model: backend.model)
                RateLimitHandler(options: .init(rate: 60, burst: 10))
                RetryHandler(options: RetryOptions(maxAttempts: 6, baseDelay: .milliseconds(20)))
                BatchingHandler(model: backend.model, options: BatchingOptions(entities: ["Track"]))
            }
            var generator = MusicRequestGenerator(seed: 21)
            for _ in 0..<12 {
                let request = try generator.request()
                #expect(
                    backendTests.comparable(try await chain.fetch(request))
                        == backendTests.comparable(try backend.store.fetch(request)), "\(request)")
            }
            let retries = metrics.counters.filter { $0.label == "storechain_retries_total" }.map(\.totalValue)
            #expect(retries.reduce(0, +) > 0, "the 500s and 429s were retried")

            backend.resetStats()
            let tracks = (1...40).map { ObjectID(entity: "Track", key: .integer($0)) }
            let nodes = try await withThrowingTaskGroup(of: Node?.self) { group in
                for id in tracks { group.addTask { try await chain.send(.objectFault(id)).objectNode() } }
                return try await group.reduce(into: [Node?]()) { $0.append($1) }
            }
            #expect(nodes.compactMap { $0 }.count == 40)
            #expect(
                (backend.stats.requestsByRoute["/v2/tracks"] ?? 0) <= 4,
                "40 faults in a handful of batch requests: \(backend.stats.requestsByRoute)")
            await chain.shutdown()
        }
    }
}
