import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A fixed mix of 60 queries against the GitHub-style v3 API (page numbers with `Link` headers,
/// `ids=` batches, per-parent lists that page, ETags, `max-age=60`, and a 500 for every 17th
/// request and a 429 for every 7th on the cold pass): generated fetches over key paths with sorts and windows, counts,
/// and aggregates over to-many key paths, each in a new chain over one disk cache, as separate
/// runs of an app or the CLI would. Every answer equals the in-memory store's, and the upstream
/// requests that were not answered 500 or 429 are counted against the least any chain could send (every
/// page of every collection the mix reaches, read once, 100 a page): at most 1.2× that. A second
/// pass within the ttl sends nothing; a third, past the ttl, sends only conditional requests,
/// page by page, each answered 304 with no body.
@Suite struct CountedWorkloadTests {
    static func mix() throws -> [FetchRequest] {
        var generator = MusicRequestGenerator(seed: 14)
        var requests = try (0..<24).map { _ in try generator.request() }
        requests += try (0..<12).map { _ in try generator.windowRequest() }
        requests += try (0..<8).map { _ in
            var count = try generator.request()
            count.resultType = .count
            count.sortDescriptors = []
            return count
        }
        for format in ["tracks.@count > 12", "ANY tracks.seconds > 400", "tracks.@count < 8", "band.country == 'UK'"] {
            requests.append(FetchRequest(entity: "Album", predicate: try FetchPredicate(format)))
        }
        for format in ["albums.@count >= 8", "ANY albums.year < 1975", "albums.@count < 6", "country == 'US'"] {
            requests.append(FetchRequest(entity: "Band", predicate: try FetchPredicate(format)))
        }
        requests += [
            FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.tracks.@count > 12"), resultType: .count),
            FetchRequest(entity: "Band", predicate: try FetchPredicate("ANY albums.tracks.seconds > 500")),
            FetchRequest(
                entity: "Album", sortDescriptors: [FetchSortDescriptor("band.name"), FetchSortDescriptor("id")],
                fetchLimit: 25, fetchOffset: 40),
            FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.band.name BEGINSWITH[c] 's'"),
                sortDescriptors: [FetchSortDescriptor("album.year", ascending: false), FetchSortDescriptor("id")],
                fetchLimit: 30),
            FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@sum.seconds > 2400")),
            FetchRequest(
                entity: "Band", predicate: try FetchPredicate("albums.@max.year < 1990"), resultType: .objectIDs),
            FetchRequest(
                entity: "Album", predicate: try FetchPredicate("tracks.@avg.seconds > 250 AND band.country == 'US'"),
                resultType: .count),
            FetchRequest(
                entity: "Track", predicate: try FetchPredicate("album.band.founded < CAST('1980-01-01', 'NSDate')"),
                sortDescriptors: [FetchSortDescriptor("title")], fetchLimit: 10, fetchOffset: 100),
        ]
        return requests
    }

    /// Pages of 100 of every entity the requests reach, through their predicates and sorts.
    static func minimum(_ requests: [FetchRequest], backend: DemoBackend) throws -> Int {
        var entities: Set<String> = []
        for request in requests {
            let entity = try backend.model.requireEntity(request.entity)
            entities.insert(entity.name)
            let keyPaths =
                (request.predicate?.keyPaths ?? [])
                + request.sortDescriptors.map { $0.keyPath.split(separator: ".").map(String.init) }
            for components in keyPaths {
                let resolved = try ResolvedKeyPath(components, from: entity, in: backend.model)
                entities.formUnion(resolved.steps.map(\.destination.name))
                if case .relationship(let relationship) = resolved.terminal {
                    entities.insert(relationship.destination)
                }
            }
        }
        return entities.reduce(0) { total, entity in
            total + (backend.store.snapshot.nodes(of: entity).count + 99) / 100
        }
    }

    /// The order the mix is asked in.
    enum Order: String, CaseIterable, CustomTestStringConvertible {
        /// As generated: the first query happens to filter tracks by an attribute the backend
        /// cannot filter, so the listing reads every track (and what its key paths reach) at once.
        case asGenerated
        /// Tracks first, those filtered and sorted by their own attributes before those whose key
        /// paths reach albums and bands, then the rest: a track list screen, then its filters. The
        /// track collection is cached whole before any album or band is, and the caches must
        /// answer the key paths from it, loading only what they reach.
        case tracksBeforeWhatTheyReach

        var testDescription: String { rawValue }

        func arrange(_ requests: [FetchRequest]) -> [FetchRequest] {
            guard self == .tracksBeforeWhatTheyReach else { return requests }
            func readsOwnAttributesOnly(_ request: FetchRequest) -> Bool {
                let keyPaths =
                    (request.predicate?.keyPaths ?? []) + request.sortDescriptors.map { [$0.keyPath] }
                return keyPaths.allSatisfy { $0.count == 1 && !$0[0].contains(".") }
            }
            let tracks = requests.filter { $0.entity == "Track" }
            return tracks.filter(readsOwnAttributesOnly) + tracks.filter { !readsOwnAttributesOnly($0) }
                + requests.filter { $0.entity != "Track" }
        }
    }

    @Test(arguments: Order.allCases)
    func theMixIsAnsweredRightColdAndFromTheCachesWarm(_ order: Order) async throws {
        let backendTests = DemoBackendTests()
        let folder = TemporaryFolder.make("storechain-workload")
        defer { try? FileManager.default.removeItem(at: folder) }
        let quirks = DemoQuirks(etags: true, maxAgeSeconds: 60)
        try await backendTests.withBackend(
            quirks: DemoQuirks(failEvery: 17, throttleEvery: 7, etags: true, maxAgeSeconds: 60)
        ) {
            backend, base in
            let clock = ManualClock()
            let model = backend.model
            let path = folder.appending(path: "cache.sqlite").path
            /// One run of the app: a new chain over the same disk cache.
            func run(_ request: FetchRequest) async throws -> FetchResult {
                let remote = try RemoteResponder(model: model, options: DemoRemoteOptions.v3(baseURL: base))
                let chain = Chain(
                    handlers: [
                        MemoryCache(model: model),
                        DiskCache(
                            model: model, path: path,
                            options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(3_600)))),
                        PaginationHandler(model: model, options: PaginationOptions(pageSize: 100)),
                        // No back-off, so the manual clock never has to move for a retry.
                        RetryHandler(options: RetryOptions(maxAttempts: 4, baseDelay: .zero)),
                    ], terminal: remote, clock: clock)
                let result = try await chain.fetch(request)
                await chain.shutdown()
                return result
            }
            let requests = order.arrange(try Self.mix())
            #expect(requests.count == 60)
            var perQuery: [Int] = []
            for request in requests {
                let before = backend.stats.requests
                let answer = backendTests.comparable(try await run(request))
                #expect(answer == backendTests.comparable(try backend.store.fetch(request)), "\(request)")
                perQuery.append(backend.stats.requests - before)
            }
            let failed = backend.stats.failed
            let throttled = backend.stats.rateLimited
            let cold = backend.stats.requests - failed - throttled
            backend.setQuirks(quirks)
            backend.resetStats()
            for request in requests {
                let answer = backendTests.comparable(try await run(request))
                #expect(answer == backendTests.comparable(try backend.store.fetch(request)), "warm: \(request)")
            }
            let warm = backend.stats.requests
            await clock.advance(by: .seconds(3_601))
            backend.resetStats()
            for request in requests {
                let answer = backendTests.comparable(try await run(request))
                #expect(answer == backendTests.comparable(try backend.store.fetch(request)), "expired: \(request)")
            }
            let expired = backend.stats
            let minimum = try Self.minimum(requests, backend: backend)
            print(
                "workload (\(order)): 60 queries on v3, cold \(cold) upstream requests (and \(failed) answered 500, \(throttled) 429), minimum \(minimum) ("
                    + String(format: "%.1f", Double(cold) / Double(max(1, minimum))) + "×), warm \(warm),"
                    + " past the ttl \(expired.requests) (\(expired.notModified) answered 304, \(expired.bytesSent) bytes);"
                    + " per query: \(perQuery.map(String.init).joined(separator: " "))")
            for (request, count) in zip(requests, perQuery) where count > 10 {
                print("workload (\(order)): \(count) requests for \(request)")
            }
            #expect(warm == 0, "within the ttl every answer comes from the disk cache")
            #expect(failed > 0 && throttled > 0, "the cold pass met the backend's failures and 429s")
            #expect(Double(cold) <= 1.2 * Double(minimum), "cold: \(cold) requests, minimum \(minimum)")
            #expect(expired.requests <= cold, "past the ttl, no more requests than cold")
            #expect(expired.notModified == expired.requests, "past the ttl, every request is conditional and unchanged")
            #expect(expired.bytesSent == 0, "past the ttl, nothing is downloaded again")
        }
    }
}
