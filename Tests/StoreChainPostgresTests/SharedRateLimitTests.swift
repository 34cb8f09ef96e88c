// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import Foundation
    import StoreChain
    import StoreChainPostgres
    import StoreChainTestSupport
    import StoreChainTesting
    import Testing

    /// A rate limit shared through PostgreSQL: limiters of separate processes (here, separate
    /// limiters with separate connections) draw from one budget of slots.
    @Suite struct SharedRateLimitTests {
        let clock = ManualClock()

        /// A limiter as one process would make it: its own connections to the shared row.
        func limiter(key: String, url: String? = nil, burst: Int = 2) throws -> RateLimiter {
            let shared = try PostgresSharedRateLimit(
                address: try PostgresAddress(url: url ?? TestPostgres.url()), key: key, schema: "rate_tests",
                clock: clock)
            return RateLimiter(options: RateLimitOptions(rate: 10, burst: burst, mode: .failFast), shared: shared)
        }

        func context() throws -> RequestContext {
            Chain(handlers: [], terminal: try MusicFixture.store(), clock: clock).makeContext()
        }

        /// Whether `limiter` gives a slot now; the wait it names when it does not.
        func attempt(_ limiter: RateLimiter) async throws -> Duration? {
            do {
                try await limiter.acquire(context: try context(), permit: false)
                return nil
            } catch let error as StoreChainError where error.code == .rateLimited {
                return error.retryAfter ?? .zero
            }
        }

        /// Whether the limiter refused, naming a wait of `expected` (rounded up to the millisecond,
        /// so a date's rounding can add one).
        func waits(_ wait: Duration?, _ expected: Duration) -> Bool {
            guard let wait else { return false }
            return wait >= expected && wait <= expected + .milliseconds(1)
        }

        @Test func processesDrawFromOneBudget() async throws {
            let key = "music-\(UUID())"
            let first = try limiter(key: key)
            let second = try limiter(key: key)
            #expect(try await attempt(first) == nil)
            #expect(try await attempt(second) == nil, "the burst of 2 is shared")
            #expect(waits(try await attempt(first), .milliseconds(100)))
            #expect(waits(try await attempt(second), .milliseconds(100)), "each alone would still have a slot")
            await clock.advance(by: .milliseconds(100))
            #expect(try await attempt(second) == nil)
            #expect(waits(try await attempt(first), .milliseconds(100)))

            let other = try limiter(key: "other-\(UUID())")
            #expect(try await attempt(other) == nil, "another key is another limit")
        }

        @Test func aRetryAfterSeenByOneProcessPausesTheOthers() async throws {
            let key = "music-\(UUID())"
            let first = try limiter(key: key)
            let second = try limiter(key: key)
            #expect(try await attempt(second) == nil)
            await first.pause(until: clock.now.addingTimeInterval(5))
            #expect(waits(try await attempt(second), .seconds(5)))
            await clock.advance(by: .seconds(5))
            #expect(try await attempt(second) == nil)
        }

        @Test func aDatabaseOutOfReachLeavesEachProcessLimitedAlone() async throws {
            let cluster = try TestPostgresCluster.start()
            try cluster.stopServer()
            defer { try? cluster.remove() }
            let alone = try limiter(key: "music", url: cluster.url)
            #expect(try await attempt(alone) == nil)
            #expect(try await attempt(alone) == nil)
            #expect(waits(try await attempt(alone), .milliseconds(100)), "the local limit still holds")
        }
    }
#endif
