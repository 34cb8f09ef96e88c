import Foundation
import MetricsTestKit
import StoreChain
import StoreChainTesting
import Testing

@Suite struct MetricsHandlerTests {
    let clock = ManualClock()
    let metrics = TestMetrics()

    @Test func countsRequestsCacheResultsAndDurations() async throws {
        let terminal = RecordingResponder { request, _ in
            await clock.advance(by: .milliseconds(40))
            var info = ResponseInfo(answeredBy: "remote", origin: .remote)
            info.cacheStatus = .miss
            return StoreResponse(.fetched(.objects([])), info: info)
        }
        let chain = Chain(handlers: [MetricsHandler(factory: metrics)], terminal: terminal, clock: clock)
        _ = try await chain.fetch(TestData.fetch("Band"))
        _ = try await chain.fetch(TestData.fetch("Band"))
        #expect(
            try metrics.expectCounter("storechain_requests_total", [("kind", "fetch"), ("origin", "remote")]).totalValue
                == 2)
        #expect(try metrics.expectCounter("storechain_cache_results_total", [("result", "miss")]).totalValue == 2)
        #expect(
            try metrics.expectTimer("storechain_request_duration", [("kind", "fetch")]).values == [
                40_000_000, 40_000_000,
            ])
    }

    @Test func countsErrorsRetriesAndRateLimitWaits() async throws {
        let failure = StoreChainError(.backendUnavailable, "answered 503")
        let terminal = RecordingResponder { _, _ in throw failure }
        let chain = Chain(
            handlers: [
                MetricsHandler(factory: metrics), RateLimitHandler(options: .init(rate: 1, burst: 1)),
                RetryHandler(options: RetryOptions(maxAttempts: 2), jitter: { $0 }),
            ], terminal: terminal, clock: clock)
        let request = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))
        let first = Task { try await chain.send(request) }
        try await clock.waitForSleepers(1)  // the retry's backoff
        await clock.advance(by: .milliseconds(200))
        await #expect(throws: StoreChainError.self) { try await first.value }
        let second = Task { try await chain.send(request) }
        try await clock.waitForSleepers(1)  // the rate limit: 1/s
        await clock.advance(by: .milliseconds(800))
        try await clock.waitForSleepers(1)  // the retry's backoff
        await clock.advance(by: .milliseconds(200))
        await #expect(throws: StoreChainError.self) { try await second.value }
        #expect(
            try metrics.expectCounter(
                "storechain_errors_total", [("code", "backend-unavailable"), ("kind", "object-fault")]
            )
            .totalValue == 2)
        #expect(try metrics.expectCounter("storechain_retries_total", [("kind", "object-fault")]).totalValue == 2)
        #expect(try metrics.expectTimer("storechain_rate_limit_wait").values == [800_000_000])
    }
}
