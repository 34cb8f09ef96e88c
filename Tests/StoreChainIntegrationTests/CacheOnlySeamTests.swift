import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A cache-only request is answered by the caches or refused just below the last of them: the
/// handlers below (pagination, rate limiting, retry, logging) and a terminal that would ask the
/// backend never see it, and the caches' own probes never pass a handler above the caches.
@Suite struct CacheOnlySeamTests {
    let backendTests = DemoBackendTests()

    /// What a handler saw: every request, and those asked cache-only (with whether they failed
    /// as not cached).
    final class Watcher: StoreHandler {
        struct Seen: Sendable {
            var requests = 0
            var cacheOnly = 0
            var notCachedFailures = 0
        }
        let seen = Locked(Seen())

        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            let cacheOnly = context.effectiveCachePolicy(for: request) == .cacheOnly
            seen.withLock {
                $0.requests += 1
                if cacheOnly { $0.cacheOnly += 1 }
            }
            do {
                return try await next(request, context)
            } catch let error as StoreChainError where error.code == .notCached {
                seen.withLock { $0.notCachedFailures += 1 }
                throw error
            }
        }
    }

    /// A cold fetch over a relationship the backend lists per owner (the demo's v3 API,
    /// `Album where tracks.@count > 12`): the planner asks the caches what they hold of the
    /// tracks (cache-only probes) before choosing between the per-album lists and the whole
    /// listing, and neither the app's handler above the caches nor the pager below them sees a
    /// probe. (Before the seam, the handler above saw each probe fail as `not-cached`.)
    @Test func aColdRelationshipFetchProbesTheCachesWithoutAHandlerAboveOrBelowSeeingIt() async throws {
        try await backendTests.withBackend { backend, base in
            let path = TemporaryFolder.make("storechain").appending(path: "cache.sqlite").path
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v3(baseURL: base))
            let (above, below) = (Watcher(), Watcher())
            let chain = Chain(terminal: remote) {
                above
                MemoryCache(model: backend.model)
                DiskCache(model: backend.model, path: path)
                below
                PaginationHandler(model: backend.model, options: PaginationOptions(pageSize: 100))
            }
            let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@count > 12"))
            let answer = try await chain.fetch(request)
            #expect(backendTests.comparable(answer) == backendTests.comparable(try backend.store.fetch(request)))
            let (seenAbove, seenBelow) = (above.seen.withLock { $0 }, below.seen.withLock { $0 })
            #expect(seenAbove.cacheOnly == 0 && seenAbove.notCachedFailures == 0, "\(seenAbove)")
            #expect(seenBelow.cacheOnly == 0 && seenBelow.notCachedFailures == 0, "\(seenBelow)")
            #expect(seenBelow.requests > 0, "the fetch itself went below the caches")
            await chain.shutdown()
        }
    }

    /// An app's cache-only fetch that the caches cannot answer fails `not-cached` there; the
    /// handler above sees it fail, the handler below and the backend never see it.
    @Test func anAppsCacheOnlyFetchStopsBelowTheLastCache() async throws {
        try await backendTests.withBackend(bands: 3) { backend, base in
            let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let (above, below) = (Watcher(), Watcher())
            let chain = Chain(handlers: [above, MemoryCache(model: backend.model), below], terminal: remote)
            var request = try TestData.fetch("Band", where: "country == 'UK'")
            request.cachePolicy = .cacheOnly
            backend.resetStats()
            let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(request) }
            #expect(error?.code == .notCached)
            #expect(above.seen.withLock { $0 }.notCachedFailures == 1)
            #expect(below.seen.withLock { $0 }.requests == 0)
            #expect(backend.stats.requests == 0)
            await chain.shutdown()
        }
    }

    /// A terminal that holds its data (`InMemoryStore`, `SQLiteStore`) answers cache-only
    /// requests itself: nothing is refused on its way there.
    @Test func aLocalTerminalAnswersCacheOnly() async throws {
        let demo = try DemoBackend(bands: 3)
        let store = InMemoryStore(model: demo.model, dataset: demo.store.snapshot)
        let below = Watcher()
        let chain = Chain(handlers: [MemoryCache(model: store.model), below], terminal: store)
        var request = try TestData.fetch("Band", where: "country == 'UK'")
        request.cachePolicy = .cacheOnly
        #expect(try await chain.fetch(request) == (try store.fetch(request)))
        #expect(below.seen.withLock { $0 }.cacheOnly == 1)
    }
}
