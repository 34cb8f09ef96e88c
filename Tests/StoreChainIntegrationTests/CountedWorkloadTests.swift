import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A fixed mix of 30 queries against the GitHub-style v3 API (page numbers with `Link` headers,
/// `ids=` batches, per-parent lists that page, ETags and `max-age=60`), each in a new chain over
/// one disk cache, as separate runs of an app or the CLI would: every answer equals the
/// in-memory store's, and the upstream requests are counted against the least any chain could
/// send (every page of every collection the mix reaches, read once, 100 a page): at most twice
/// 1.5× that (1.4× when written). A second pass within the ttl sends nothing; a third, past the
/// ttl, sends only conditional requests, page by page, each answered 304 with no body.
@Suite struct CountedWorkloadTests {
    static func mix() throws -> [FetchRequest] {
        var generator = MusicRequestGenerator(seed: 14)
        var requests = try (0..<22).map { _ in try generator.request() }
        for format in ["tracks.@count > 12", "ANY tracks.seconds > 400", "tracks.@count < 8", "band.country == 'UK'"] {
            requests.append(FetchRequest(entity: "Album", predicate: try FetchPredicate(format)))
        }
        for format in ["albums.@count >= 8", "ANY albums.year < 1975", "albums.@count < 6", "country == 'US'"] {
            requests.append(FetchRequest(entity: "Band", predicate: try FetchPredicate(format)))
        }
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

    @Test func theMixIsAnsweredRightColdAndFromTheCachesWarm() async throws {
        let backendTests = DemoBackendTests()
        let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-workload-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let quirks = DemoQuirks(etags: true, maxAgeSeconds: 60)
        try await backendTests.withBackend(quirks: quirks) { backend, base in
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
                    ], terminal: remote, clock: clock)
                let result = try await chain.fetch(request)
                await chain.shutdown()
                return result
            }
            let requests = try Self.mix()
            #expect(requests.count == 30)
            var perQuery: [Int] = []
            for request in requests {
                let before = backend.stats.requests
                let answer = backendTests.comparable(try await run(request))
                #expect(answer == backendTests.comparable(try backend.store.fetch(request)), "\(request)")
                perQuery.append(backend.stats.requests - before)
            }
            let cold = backend.stats.requests
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
                "workload: 30 queries on v3, cold \(cold) upstream requests, minimum \(minimum) ("
                    + String(format: "%.1f", Double(cold) / Double(max(1, minimum))) + "×), warm \(warm),"
                    + " past the ttl \(expired.requests) (\(expired.notModified) answered 304, \(expired.bytesSent) bytes);"
                    + " per query: \(perQuery.map(String.init).joined(separator: " "))")
            for (request, count) in zip(requests, perQuery) where count > 10 {
                print("workload: \(count) requests for \(request)")
            }
            #expect(warm == 0, "within the ttl every answer comes from the disk cache")
            // 18 against 17 (1.1×) once pages stop at `rel="last"`; 24 before; 295 before sub-requests
            // and complete collections.
            #expect(Double(cold) <= 1.5 * Double(minimum), "cold: \(cold) requests, minimum \(minimum)")
            #expect(expired.requests <= cold, "past the ttl, no more requests than cold")
            #expect(expired.notModified == expired.requests, "past the ttl, every request is conditional and unchanged")
            #expect(expired.bytesSent == 0, "past the ttl, nothing is downloaded again")
        }
    }
}
