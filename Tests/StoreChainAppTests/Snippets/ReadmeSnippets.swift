// swift-format-ignore-file

import CustomHandlerExample
import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite

// The Swift code blocks of README.md, each between `snippet begin` and `snippet end`, compiled
// here (never run). `DocumentedCodeTests` checks that every block in the docs is one of these.
// The files are not formatted (swift-format-ignore-file): a region is the docs' text as written.

func registeringAHandlerType() throws {
    // snippet begin
    var registry = HandlerRegistry.standard
    registry.register("fixed-bands", options: FixedBandsOptions.self) { options, context in
        FixedBandsHandler(model: context.model, bands: options.nodes)
    }
    let pipeline = try Pipeline.load(contentsOf: URL(filePath: "custom.pipeline.yml"), registry: registry)
    let context = ObjectContext(chain: pipeline.makeChain(), model: pipeline.model)
    // snippet end
    _ = context
}

func fetchRequestsInSwift() throws {
    // snippet begin
    let model = try ModelFile.load(contentsOf: URL(filePath: "Examples/Music/music.model.yml"))
    let store = try JSONFileStore(contentsOf: URL(filePath: "Examples/Music/music.json"), model: model)

    var request = FetchRequest(entity: "Album")
    request.predicate = try FetchPredicate("band.name BEGINSWITH[c] %@ AND year >= %d", "rue", 2010)
    request.sortDescriptors = [FetchSortDescriptor("year", ascending: false)]
    request.fetchLimit = 10
    let result = try store.fetch(request)   // .objects([Node]); also .objectIDs, .count, .dictionaries

    // The typed builder makes the same predicate:
    enum Album { static let year = Key<Int>("year"); static let band = ToOne("band") }
    enum Band { static let name = Key<String>("name"); static let albums = ToMany("albums") }
    let same = Album.band.key(Band.name).beginsWith("rue", options: .caseInsensitive) && Album.year >= 2010
    let prolific = Band.albums.count > 5 && Band.albums.any(Album.year) < 1990
    // snippet end
    _ = (result, same, prolific)
}

func writingAHandler(store: InMemoryStore) async throws {
    // snippet begin
    struct Timing: StoreHandler {
        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder)
            async throws -> StoreResponse
        {
            let start = context.clock.now
            let response = try await next(request, context)          // forward…
            context.logger.info("\(request) in \(context.clock.now.timeIntervalSince(start))s")
            return response                                          // …and see the answer come back
        }
    }

    let chain = Chain(terminal: store) {
        Timing().when(kinds: [.fetch], entities: ["Band"])         // scoped: other requests pass by
        MemoryCache(model: store.model)
    }
    let result = try await chain.fetch(FetchRequest(entity: "Band"))
    await chain.shutdown()   // waits for background work handlers started (revalidation, prefetch)
    // snippet end
    _ = result
}

func cachingHandlers(remote: RemoteResponder, model: ObjectModel) throws {
    // snippet begin
    let chain = Chain(terminal: remote) {
        MemoryCache(model: model, limits: .init(maxObjects: 10_000, maxBytes: 64 << 20))
        DiskCache(
            model: model, path: "Caches/music.sqlite", maxBytes: 200 << 20,
            options: CacheOptions(
                expiry: CacheExpiry(defaultTTL: .seconds(300), entityTTL: ["Band": .seconds(3_600)]),
                staleIfError: .seconds(86_400)))
    }
    // snippet end
    _ = chain
}

func trafficHandlers(remote: RemoteResponder, model: ObjectModel) throws {
    // snippet begin
    let chain = Chain(terminal: remote) {
        LoggingHandler(level: .info, secrets: ["api_key"])
        MetricsHandler()
        MemoryCache(model: model)
        DiskCache(model: model, path: "Caches/music.sqlite")
        PaginationHandler(model: model, options: .init(pageSize: 50, maxPages: 200, concurrency: 4))
        RateLimitHandler(options: .init(rate: 10, burst: 20, maxInFlight: 4))
        RetryHandler(options: .init(maxAttempts: 4))
        BatchingHandler(model: model, options: .init(entities: ["Track"]))
    }
    // snippet end
    _ = chain
}

func settlingHeldSaves(chain: Chain) async throws {
    // snippet begin
    if let outbox = chain.handlers(of: (any SaveHolding).self).first {
        for entry in try await outbox.entries() where entry.state == .failed {
            print("#\(entry.id) \(entry.kind): \(entry.lastError ?? "")")
            try await outbox.retry(entry.id)  // or outbox.discard(entry.id)
        }
    }
    // snippet end
}

func observingThroughAChangeFeed() async throws {
    func render(_ objects: [ManagedObject]) {}
    // snippet begin
    let pipeline = try Pipeline.load(contentsOf: URL(filePath: "live.pipeline.yml"))
    let context = ObjectContext(chain: pipeline.makeChain(), model: pipeline.model)
    let expensive = FetchRequest(entity: "Album", predicate: try FetchPredicate("price > 15"))
    for try await albums in context.observe(expensive) {
        render(albums)  // again each time another client's change alters the result
    }
    // snippet end
}
