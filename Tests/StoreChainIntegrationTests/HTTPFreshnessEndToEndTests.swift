import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// RFC 9111 end to end: a backend sends freshness headers, the memory or disk cache in front of
/// the remote responder decides, and each scenario checks how many upstream exchanges each
/// query made and of which kind: none, conditional (with validators) or unconditional.
@Suite struct HTTPFreshnessEndToEndTests {
    enum Cache: String, CaseIterable, Sendable, CustomStringConvertible {
        case memory, disk
        var description: String { rawValue }
    }

    /// One upstream exchange, as the backend saw it.
    enum Exchange: String, Sendable {
        case conditional, unconditional
    }

    /// A backend with one listing, `GET /bands`, whose headers the scenario sets; it answers
    /// "not modified" to a matching `If-None-Match` (with `notModifiedHeaders`) and can fail.
    final class Backend: Sendable {
        struct State {
            var headers: [String: String] = [:]
            var notModifiedHeaders: [String: String] = [:]
            var etag: String? = "\"v1\""
            var failing = false
            var secondName = "Lower Dens"
            var exchanges: [Exchange] = []
        }
        let state = Locked(State())
        let clock: ManualClock

        init(clock: ManualClock) { self.clock = clock }

        func update(_ change: (inout State) -> Void) { state.withLock { change(&$0) } }

        /// The exchanges since the last call.
        func take() -> [Exchange] {
            state.withLock { state in
                defer { state.exchanges = [] }
                return state.exchanges
            }
        }

        var transport: StubTransport {
            StubTransport { [self] request in
                let current = state.withLock { state in
                    let conditional =
                        request.headers["If-None-Match"] != nil || request.headers["If-Modified-Since"] != nil
                    state.exchanges.append(conditional ? .conditional : .unconditional)
                    return state
                }
                if current.failing { return .status(503) }
                var headers = current.headers
                headers["Date"] = headers["Date"] ?? HTTPFreshnessEndToEndTests.httpDate(clock.now)
                if let etag = current.etag { headers["ETag"] = etag }
                if let etag = current.etag, request.headers["If-None-Match"] == etag {
                    var notModified = current.notModifiedHeaders
                    notModified["Date"] = notModified["Date"] ?? HTTPFreshnessEndToEndTests.httpDate(clock.now)
                    notModified["ETag"] = etag
                    return .status(304, headers: notModified)
                }
                return .json(
                    #"[{"id": 1, "name": "Low"}, {"id": 2, "name": "\#(current.secondName)"}]"#, headers: headers)
            }
        }
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
    }

    /// A chain of one cache in front of the remote responder; a disk cache's file is `path`.
    struct Harness {
        let clock: ManualClock
        let backend: Backend
        let cache: Cache
        let path: String
        let options: CacheOptions
        var chain: Chain

        init(
            _ cache: Cache, ttl: Duration = .zero, staleIfError: Duration? = .seconds(86_400),
            staleWhileRevalidate: Duration? = nil, heuristic: Bool = false
        ) throws {
            clock = ManualClock()
            backend = Backend(clock: clock)
            self.cache = cache
            path = TemporaryFolder.make("storechain").appending(path: "cache.sqlite").path
            options = CacheOptions(
                expiry: CacheExpiry(defaultTTL: ttl, heuristic: heuristic), staleIfError: staleIfError,
                staleWhileRevalidate: staleWhileRevalidate)
            chain = try Self.chain(cache, path: path, options: options, clock: clock, backend: backend)
        }

        static func chain(_ cache: Cache, path: String, options: CacheOptions, clock: ManualClock, backend: Backend)
            throws -> Chain
        {
            let model = try HTTPFreshnessEndToEndTests.model()
            let remote = try RemoteResponder(
                model: model,
                options: RemoteOptions(
                    baseURL: URL(string: "https://api.example")!,
                    entities: ["Band": RemoteEntityOptions(fetch: [RemoteEndpoint("GET /bands")])]),
                transport: backend.transport, environment: [:])
            let handler: any StoreHandler =
                switch cache {
                case .memory: MemoryCache(model: model, options: options)
                case .disk: DiskCache(model: model, path: path, options: options)
                }
            return Chain(handlers: [handler], terminal: remote, clock: clock)
        }

        /// A new process over the same disk cache file.
        mutating func restart() throws {
            chain = try Self.chain(cache, path: path, options: options, clock: clock, backend: backend)
        }

        /// Fetches every band and returns the exchanges it caused.
        func query() async throws -> [Exchange] {
            let response = try await chain.send(.fetch(FetchRequest(entity: "Band")))
            if case .objects(let bands) = try response.fetchResult() {
                #expect(bands.count == 2, "every answer holds both bands")
            } else {
                Issue.record("expected objects, got \(response.result)")
            }
            return backend.take()
        }

        /// The response of a fetch (for stale flags and errors).
        func send() async throws -> StoreResponse {
            defer { _ = backend.take() }
            return try await chain.send(.fetch(FetchRequest(entity: "Band")))
        }

        func advance(_ seconds: Int) async { await clock.advance(by: .seconds(seconds)) }
    }

    @Test(arguments: Cache.allCases)
    func aNotModifiedAnswerKeepsTheStoredLifetime(_ cache: Cache) async throws {
        let harness = try Harness(cache, ttl: .zero)
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=60"] }
        #expect(try await harness.query() == [.unconditional])
        #expect(try await harness.query() == [])
        await harness.advance(61)
        #expect(try await harness.query() == [.conditional], "revalidated once, with the ETag")
        #expect(try await harness.query() == [], "fresh again for max-age, though the 304 had no Cache-Control")
        await harness.advance(61)
        #expect(try await harness.query() == [.conditional])
    }

    @Test(arguments: Cache.allCases)
    func aNotModifiedAnswerWithItsOwnRulesUsesThem(_ cache: Cache) async throws {
        let harness = try Harness(cache, ttl: .zero)
        harness.backend.update {
            $0.headers = ["Cache-Control": "max-age=60"]
            $0.notModifiedHeaders = ["Cache-Control": "max-age=600"]
        }
        _ = try await harness.query()
        await harness.advance(61)
        #expect(try await harness.query() == [.conditional])
        await harness.advance(300)
        #expect(try await harness.query() == [], "the 304's max-age=600 replaced the stored max-age=60")
    }

    @Test(arguments: Cache.allCases)
    func noCacheIsRevalidatedOnEveryUseWhateverTheTimeToLive(_ cache: Cache) async throws {
        let harness = try Harness(cache, ttl: .seconds(300))
        harness.backend.update { $0.headers = ["Cache-Control": "no-cache"] }
        #expect(try await harness.query() == [.unconditional])
        #expect(try await harness.query() == [.conditional], "one exchange per query, never two")
        #expect(try await harness.query() == [.conditional], "still no-cache after a 304 without headers")
    }

    @Test(arguments: Cache.allCases)
    func aResponseStoredAlreadyExpiredCostsOneExchangePerQuery(_ cache: Cache) async throws {
        let harness = try Harness(cache, ttl: .seconds(300))
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=0"] }
        #expect(try await harness.query() == [.unconditional])
        #expect(try await harness.query() == [.conditional])
        harness.backend.update { $0.etag = nil }
        #expect(try await harness.query() == [.conditional], "the stored ETag is still sent")
        #expect(try await harness.query() == [.unconditional], "without validators: one full exchange")
        #expect(try await harness.query() == [.unconditional])
    }

    @Test(arguments: Cache.allCases, ["max-age=2, must-revalidate", "no-cache", "max-age=2, no-cache"])
    func mustRevalidateAndNoCacheWinOverStaleIfError(_ cache: Cache, _ cacheControl: String) async throws {
        let harness = try Harness(cache, staleIfError: .seconds(86_400))
        harness.backend.update { $0.headers = ["Cache-Control": cacheControl] }
        _ = try await harness.query()
        await harness.advance(5)
        harness.backend.update { $0.failing = true }
        await #expect(throws: StoreChainError.self, "the origin forbids serving it stale") {
            try await harness.send()
        }
    }

    @Test(arguments: Cache.allCases)
    func staleIfErrorServesStaleWithinTheResponsesBound(_ cache: Cache) async throws {
        let harness = try Harness(cache, staleIfError: .seconds(86_400))
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=2"] }
        _ = try await harness.query()
        await harness.advance(5)
        harness.backend.update {
            $0.failing = true
        }
        #expect(try await harness.send().info.isStale, "the pipeline's stale-if-error applies")

        let bounded = try Harness(cache, staleIfError: .seconds(86_400))
        bounded.backend.update { $0.headers = ["Cache-Control": "max-age=2, stale-if-error=10"] }
        _ = try await bounded.query()
        await bounded.advance(8)
        bounded.backend.update { $0.failing = true }
        #expect(try await bounded.send().info.isStale, "within the response's stale-if-error=10")
        await bounded.advance(10)
        await #expect(throws: StoreChainError.self, "past it") { try await bounded.send() }
    }

    @Test(arguments: Cache.allCases)
    func staleWhileRevalidateFromTheResponseAnswersAtOnce(_ cache: Cache) async throws {
        let harness = try Harness(cache, staleWhileRevalidate: nil)
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=1, stale-while-revalidate=30"] }
        _ = try await harness.query()
        await harness.advance(5)
        let stale = try await harness.chain.send(.fetch(FetchRequest(entity: "Band")))
        #expect(stale.info.isStale, "answered from the cache while it refreshes")
        await harness.chain.shutdown()
        #expect(harness.backend.take() == [.conditional], "refreshed in the background")
        await harness.advance(40)
        #expect(try await harness.query() == [.conditional], "past the allowance: revalidated before answering")
    }

    @Test(arguments: Cache.allCases)
    func noStoreIsNeverStoredAndForgetsWhatWas(_ cache: Cache) async throws {
        let harness = try Harness(cache, staleIfError: .seconds(86_400))
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=60"] }
        _ = try await harness.query()
        await harness.advance(61)
        harness.backend.update {
            $0.headers = ["Cache-Control": "no-store"]
            $0.etag = nil
            $0.secondName = "Renamed"
        }
        let answer = try await harness.chain.send(.fetch(FetchRequest(entity: "Band")))
        #expect(harness.backend.take() == [.conditional], "revalidated with what was stored")
        guard case .objects(let bands) = try answer.fetchResult() else {
            Issue.record("expected objects, got \(answer.result)")
            return
        }
        #expect(
            bands.map { $0.attributes["name"]?.stringValue } == ["Low", "Renamed"],
            "answered by the new response, not by what was stored")
        #expect(try await harness.query() == [.unconditional], "nothing is left of it, not even its validators")
        #expect(try await harness.query() == [.unconditional])
        harness.backend.update { $0.failing = true }
        await #expect(throws: StoreChainError.self, "what was stored for it is no longer used") {
            try await harness.send()
        }
    }

    @Test(arguments: Cache.allCases)
    func ageCountsAgainstTheLifetime(_ cache: Cache) async throws {
        let harness = try Harness(cache)
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=60", "Age": "50"] }
        _ = try await harness.query()
        await harness.advance(9)
        #expect(try await harness.query() == [])
        await harness.advance(2)
        #expect(try await harness.query() == [.conditional])

        let old = try Harness(cache)
        old.backend.update {
            $0.headers = [
                "Cache-Control": "max-age=60", "Date": HTTPFreshnessEndToEndTests.httpDate(old.clock.now - 100),
            ]
        }
        _ = try await old.query()
        #expect(try await old.query() == [.conditional], "generated 100 s ago: already stale on arrival")
    }

    @Test(arguments: Cache.allCases)
    func theHeuristicApplesOnlyWhenAskedFor(_ cache: Cache) async throws {
        let lastModified = ["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"]
        let plain = try Harness(cache, ttl: .zero)
        plain.backend.update {
            $0.headers = lastModified
            $0.etag = nil
        }
        _ = try await plain.query()
        #expect(try await plain.query() == [.conditional], "ttl 0, revalidated with If-Modified-Since")

        let heuristic = try Harness(cache, ttl: .zero, heuristic: true)
        heuristic.backend.update {
            $0.headers = lastModified
            $0.etag = nil
        }
        _ = try await heuristic.query()
        await heuristic.advance(86_400)
        #expect(try await heuristic.query() == [], "a tenth of decades since Last-Modified")
    }

    @Test func freshnessAndItsRulesSurviveARestart() async throws {
        var harness = try Harness(.disk, ttl: .zero)
        harness.backend.update { $0.headers = ["Cache-Control": "max-age=60, must-revalidate"] }
        #expect(try await harness.query() == [.unconditional])
        try harness.restart()
        #expect(try await harness.query() == [], "fresh across the restart")
        await harness.advance(61)
        try harness.restart()
        #expect(try await harness.query() == [.conditional], "revalidated with the stored ETag")
        try harness.restart()
        #expect(try await harness.query() == [], "the renewed lifetime was stored")
        await harness.advance(61)
        try harness.restart()
        harness.backend.update { $0.failing = true }
        await #expect(throws: StoreChainError.self, "must-revalidate, remembered across the restart") {
            try await harness.send()
        }
    }
}
