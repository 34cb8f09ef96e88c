import Foundation
import Logging
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline

/// The second half of `storechain demo`: the demo backend over HTTP, through chains built from
/// the bundled pipeline files (`Examples/Bandcamp/v1.pipeline.yml`, `v2.pipeline.yml` and
/// `v3.pipeline.yml`).
struct DemoBackendTour {
    let bands: Int
    private var summary: [[Value]] = []

    init(bands: Int) {
        self.bands = bands
    }

    /// Precise questions an app asks.
    static func questions() throws -> [(String, FetchRequest)] {
        [
            (
                "bands named rue…",
                FetchRequest(entity: "Band", predicate: try FetchPredicate("name BEGINSWITH[c] 'rue'"))
            ),
            (
                "band 1's albums since 1990",
                FetchRequest(
                    entity: "Album", predicate: try FetchPredicate("band.id == 1 AND year >= 1990"),
                    sortDescriptors: [FetchSortDescriptor("year")])
            ),
            ("three tracks by ID", FetchRequest(entity: "Track", predicate: try FetchPredicate("id IN {7, 8, 9}"))),
            (
                "albums of the seventies under 8",
                FetchRequest(
                    entity: "Album", predicate: try FetchPredicate("year BETWEEN {1970, 1979} AND price < 8"),
                    resultType: .count)
            ),
            (
                "bands 11-15 by name",
                FetchRequest(
                    entity: "Band", sortDescriptors: [FetchSortDescriptor("name")], fetchLimit: 5, fetchOffset: 10)
            ),
        ]
    }

    /// Questions through key paths and relationships, for the GitHub-style v3 API.
    static func keyPathQuestions() throws -> [(String, FetchRequest)] {
        [
            (
                "newest albums of UK bands",
                FetchRequest(
                    entity: "Album", predicate: try FetchPredicate("band.country == 'UK'"),
                    sortDescriptors: [FetchSortDescriptor("year", ascending: false), FetchSortDescriptor("title")],
                    fetchLimit: 5)
            ),
            (
                "bands with an album before 1975",
                FetchRequest(
                    entity: "Band", predicate: try FetchPredicate("ANY albums.year < 1975"), resultType: .count)
            ),
            (
                "bands with 10 or more albums",
                FetchRequest(entity: "Band", predicate: try FetchPredicate("albums.@count >= 10"), resultType: .count)
            ),
            (
                "seventies albums under 8",
                FetchRequest(
                    entity: "Album", predicate: try FetchPredicate("year BETWEEN {1970, 1979} AND price < 8"),
                    resultType: .count)
            ),
        ]
    }

    mutating func run() async throws {
        let backend = try DemoBackend(bands: bands)
        let port = try await backend.start()
        let folder = FileManager.default.temporaryDirectory.appending(path: "storechain-demo-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The demo's caches live in its own folder, so every run starts cold.
        let environment = ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path]
        let clock = ShiftedClock()
        var logger = Logger(label: "storechain.demo")
        logger.logLevel = .error
        let chains: (v1: Chain, v2: Chain)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try DemoCatalogModel.text.write(
                to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
            var loaded: [Chain] = []
            for (name, text) in [("v1", DemoPipelines.v1), ("v2", DemoPipelines.v2)] {
                let file = folder.appending(path: "\(name).pipeline.yml")
                try text.write(to: file, atomically: true, encoding: .utf8)
                let pipeline = try Pipeline.load(
                    contentsOf: file, environment: environment)
                loaded.append(pipeline.makeChain(clock: clock, logger: logger))
            }
            chains = (loaded[0], loaded[1])
            print("\nNow a real backend: the demo server on http://127.0.0.1:\(port), in two API generations,")
            print("each described by a pipeline file (Examples/Bandcamp/v1.pipeline.yml and v2.pipeline.yml).")
            print("v1 can only dump the whole catalog; v2 has search, get by key, batch get and paging.\n")
            try await generations(backend, chains)
            try await secondRun(backend, chains)
            try await staleWhileRevalidate(backend, chains.v2, clock: clock)
            try await rateLimited(backend, chains.v2)
            try await batchedFaults(backend, chains.v2, model: backend.model)
            try await githubStyle(
                backend, folder: folder, environment: environment)
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
        try await offline(chains, clock: clock)
        await chains.v1.shutdown()
        await chains.v2.shutdown()
        print("\nSummary:")
        print(
            indent(
                ResultFormatter.table(
                    header: ["step", "queries", "upstream requests", "bytes", "cache hits", "time (ms)"], rows: summary)
            ))
    }

    /// Runs one step and adds its line to the summary.
    private mutating func step(
        _ name: String, _ backend: DemoBackend?, _ body: () async throws -> (queries: Int, hits: Int)
    ) async throws {
        let before = backend?.stats
        let started = ContinuousClock.now
        let (queries, hits) = try await body()
        let elapsed = (ContinuousClock.now - started) / .milliseconds(1)
        let after = backend?.stats
        summary.append([
            .string(name), .integer(queries), .integer((after?.requests ?? 0) - (before?.requests ?? 0)),
            .integer((after?.bytesSent ?? 0) - (before?.bytesSent ?? 0)), .integer(hits),
            .integer(Int(elapsed.rounded())),
        ])
    }

    private static func isCacheHit(_ response: StoreResponse) -> Bool {
        response.info.origin == .memory || response.info.origin == .disk
    }

    private mutating func generations(_ backend: DemoBackend, _ chains: (v1: Chain, v2: Chain)) async throws {
        var rows: [[Value]] = []
        for (generation, chain) in [("v1", chains.v1), ("v2", chains.v2)] {
            try await step("\(generation): first run", backend) {
                var index = 0
                for (title, request) in try Self.questions() {
                    let before = backend.stats
                    let result = try await chain.fetch(request)
                    let after = backend.stats
                    if generation == "v1" {
                        rows.append([.string(title), .string(Self.summary(result))])
                    }
                    rows[index] += [
                        .integer(after.requests - before.requests), .integer(after.bytesSent - before.bytesSent),
                    ]
                    index += 1
                }
                return (index, 0)
            }
        }
        for index in rows.indices {
            let v1 = try await chains.v1.fetch(try Self.questions()[index].1)
            let v2 = try await chains.v2.fetch(try Self.questions()[index].1)
            rows[index].insert(.string(v1 == v2 ? "yes" : "NO"), at: 2)
        }
        print("1. The same questions through both pipelines: identical answers, very different traffic.")
        print(
            indent(
                ResultFormatter.table(
                    header: ["question", "answer", "same", "v1 requests", "v1 bytes", "v2 requests", "v2 bytes"],
                    rows: rows)))
        print("   v1 downloads the whole catalog once, and its caches answer everything else; v2 asks precisely.")
    }

    private mutating func secondRun(_ backend: DemoBackend, _ chains: (v1: Chain, v2: Chain)) async throws {
        var hits = 0
        let before = backend.stats.requests
        try await step("second run, from cache", backend) {
            for chain in [chains.v1, chains.v2] {
                for (_, request) in try Self.questions() where Self.isCacheHit(try await chain.send(.fetch(request))) {
                    hits += 1
                }
            }
            return (2 * (try Self.questions().count), hits)
        }
        print(
            "\n2. A second run: \(hits) of \(2 * (try Self.questions().count)) answers from the caches, "
                + "\(backend.stats.requests - before) requests to the backend.")
    }

    private mutating func staleWhileRevalidate(_ backend: DemoBackend, _ chain: Chain, clock: ShiftedClock) async throws
    {
        clock.advance(by: .seconds(2 * 3_600))
        let question = try Self.questions()[1].1
        var stale = false
        var refreshRequests = 0
        try await step("two hours later: stale-while-revalidate", backend) {
            let before = backend.stats.requests
            let response = try await chain.send(.fetch(question))
            stale = response.info.isStale
            while chain.background.count > 0 { try await Task.sleep(for: .milliseconds(5)) }
            refreshRequests = backend.stats.requests - before
            return (1, Self.isCacheHit(response) ? 1 : 0)
        }
        print(
            "\n3. Two hours later the cached answers have expired (ttl 1h). With stale-while-revalidate: 1d the"
                + " disk cache answers at once (stale: \(stale)) and refreshes in the background"
                + " (\(refreshRequests) request).")
    }

    private mutating func rateLimited(_ backend: DemoBackend, _ chain: Chain) async throws {
        backend.setQuirks(DemoQuirks(rateLimitPerSecond: 15))
        defer { backend.setQuirks(.none) }
        let before = backend.stats
        var answered = 0
        try await step("40 reloads, backend limits to 15/s", backend) {
            let requests = try (1...40).map { key in
                var request = FetchRequest(entity: "Album", predicate: try FetchPredicate("id == %d", key))
                request.cachePolicy = .reload
                return request
            }
            answered = try await withThrowingTaskGroup(of: Int.self) { group in
                for request in requests {
                    group.addTask {
                        guard case .objects(let nodes) = try await chain.fetch(request) else { return 0 }
                        return nodes.count
                    }
                }
                return try await group.reduce(0, +)
            }
            return (requests.count, 0)
        }
        print(
            "\n4. 40 concurrent reloads against a backend that allows 15 requests a second: all \(answered) answered;"
                + " the backend sent \(backend.stats.rateLimited - before.rateLimited) 429s, absorbed by rate-limit"
                + " (40/s, burst 10) and retry (Retry-After honoured).")
    }

    private mutating func batchedFaults(_ backend: DemoBackend, _ chain: Chain, model: ObjectModel) async throws {
        let total = backend.store.snapshot.nodes(of: "Track").count
        let ids = (0..<300).map { ObjectID(entity: "Track", key: .integer(total / 2 + $0)) }
        let before = backend.stats.requestsByRoute["/v2/tracks"] ?? 0
        try await step("300 faulted tracks", backend) {
            let context = ObjectContext(chain: chain, model: model)
            for track in context.objects(with: ids) { _ = try await track.value("title") }
            return (ids.count, 0)
        }
        let batches = (backend.stats.requestsByRoute["/v2/tracks"] ?? 0) - before
        print(
            "\n5. Reading 300 faulted tracks one after another: \(batches) batch requests (GET /v2/tracks?ids=…),"
                + " not 300.")
    }

    /// The v3 API through its pipeline: what the questions cost against the least any client
    /// could send, and what a second process over the same disk cache sends.
    private mutating func githubStyle(_ backend: DemoBackend, folder: URL, environment: [String: String]) async throws {
        let file = folder.appending(path: "v3.pipeline.yml")
        try DemoPipelines.v3.write(to: file, atomically: true, encoding: .utf8)
        let questions = try Self.keyPathQuestions()
        var rows: [[Value]] = []
        var total = 0
        try await step("v3: key-path questions", backend) {
            let chain = try Pipeline.load(contentsOf: file, environment: environment).makeChain()
            for (title, request) in questions {
                let before = backend.stats.requests
                let result = try await chain.fetch(request)
                let requests = backend.stats.requests - before
                total += requests
                rows.append([.string(title), .string(Self.summary(result)), .integer(requests)])
            }
            await chain.shutdown()
            return (questions.count, 0)
        }
        var again = 0
        try await step("v3: a new process, same disk cache", backend) {
            let chain = try Pipeline.load(contentsOf: file, environment: environment).makeChain()
            let before = backend.stats.requests
            var hits = 0
            for (_, request) in questions where Self.isCacheHit(try await chain.send(.fetch(request))) { hits += 1 }
            again = backend.stats.requests - before
            await chain.shutdown()
            return (questions.count, hits)
        }
        let snapshot = backend.store.snapshot
        let minimum = ["Album", "Band"].reduce(0) { $0 + (snapshot.nodes(of: $1).count + 99) / 100 }
        print(
            "\n6. A GitHub-style API (v3: every list pages by page number with Link headers, per-band album lists"
                + " page too), through Examples/Bandcamp/v3.pipeline.yml. Related objects are sub-requests through"
                + " the chain, so the caches answer what an earlier question read:")
        print(indent(ResultFormatter.table(header: ["question", "answer", "requests"], rows: rows)))
        print(
            "   \(total) requests in all; the least any client could send is \(minimum) (every page of albums and"
                + " bands, 100 a page, read once). A new process over the same disk cache: \(again) requests.")
    }

    private mutating func offline(_ chains: (v1: Chain, v2: Chain), clock: ShiftedClock) async throws {
        clock.advance(by: .seconds(3_600))
        var answered = 0
        var asked = 0
        try await step("backend stopped", nil) {
            for chain in [chains.v1, chains.v2] {
                for (_, request) in try Self.questions() {
                    // An app that knows it is offline asks for cached answers only, stale or not.
                    var offline = request
                    offline.cachePolicy = .cacheOnly
                    asked += 1
                    if (try? await chain.fetch(offline)) != nil { answered += 1 }
                }
            }
            return (asked, answered)
        }
        print(
            "\n7. With the backend stopped, the disk caches still answer \(answered) of \(asked) questions"
                + " (policy cache-only, three hours later).")
    }

    private static func summary(_ result: FetchResult) -> String {
        switch result {
        case .objects(let nodes): "\(nodes.count) object(s)"
        case .objectIDs(let ids): "\(ids.count) ID(s)"
        case .count(let count): "count \(count)"
        case .dictionaries(let rows): "\(rows.count) row(s)"
        }
    }

    private func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "   " + $0 }.joined(separator: "\n")
    }
}
