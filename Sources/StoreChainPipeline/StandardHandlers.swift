import Foundation
import Logging
import StoreChain
import StoreChainHTTP
import StoreChainSQLite

extension HandlerRegistry {
    /// The built-in handler types — `logging`, `metrics`, `memory-cache`, `disk-cache`,
    /// `postgres-cache` (with the package's `Postgres` trait, on by default), `outbox`,
    /// `pagination`, `rate-limit`, `retry`, `batching`, `change-feed` — and terminals — `remote`, `sqlite`,
    /// `json-file`, `in-memory` — and the remote terminal's HTTP interceptors — `request-id`,
    /// `token-file`. Their options are documented in `Docs/Pipelines.md`.
    public static var standard: HandlerRegistry {
        var registry = HandlerRegistry()
        // Each handler's options are read by the type its Swift init takes, with the defaults
        // of that init; the registry only adds what needs the pipeline (the model, paths).
        registry.register("logging", options: LoggingHandler.self) { handler, _ in handler }
        registry.register("metrics", options: MetricsHandler.self) { handler, _ in handler }
        registry.register("memory-cache", options: MemoryCacheFileOptions.self, placement: .cache) {
            options, context in
            try context.model.checkEntities(options.cache.expiry.entityTTL.keys.sorted(), option: "entity-ttl")
            return MemoryCache(model: context.model, limits: options.limits, options: options.cache)
        }
        registry.register("disk-cache", options: DiskCacheFileOptions.self, placement: .cache) { options, context in
            try context.model.checkEntities(options.cache.expiry.entityTTL.keys.sorted(), option: "entity-ttl")
            if context.validatesOnly { return MemoryCache(model: context.model) }
            var file = options.file
            file.path = context.cacheURL(forPath: file.path).path
            file.namespace = file.namespace ?? context.cacheNamespace
            return DiskCache(model: context.model, file: file, options: options.cache)
        }
        registry.register("outbox", options: OutboxOptions.self, placement: .outbox) { options, context in
            // Checking a pipeline opens no file.
            if context.validatesOnly { return NotOpened(name: "outbox") }
            var options = options
            options.path = context.url(forPath: options.path).standardizedFileURL.path
            return try OutboxHandler(model: context.model, options: options)
        }
        registry.register("pagination", options: PaginationOptions.self, placement: .pagination) {
            options, context in
            try context.model.checkEntities(options.pageSizes.keys.sorted(), option: "page-sizes")
            return PaginationHandler(model: context.model, options: options)
        }
        registry.register("rate-limit", options: RateLimitOptions.self, placement: .traffic) { options, _ in
            RateLimitHandler(options: options)
        }
        registry.register("retry", options: RetryOptions.self, placement: .traffic) { options, _ in
            RetryHandler(options: options)
        }
        registry.register("change-feed", options: ChangeFeedOptions.self, placement: .feed) { options, context in
            // Checking a pipeline starts no feed.
            if context.validatesOnly { return NotOpened(name: "change-feed") }
            var options = options
            options.cursorFile = options.cursorFile.map { context.cacheURL(forPath: $0).path }
            return ChangeFeedHandler(options: options)
        }
        registry.register("batching", options: BatchingOptions.self, placement: .batching) { options, context in
            try context.model.checkEntities(options.entities.sorted(), option: "entities")
            return BatchingHandler(model: context.model, options: options)
        }
        registry.registerTerminal("remote") { decoder, context in
            let options = try decoder.decode(RemoteOptions.self)
            let interceptors = try decoder.interceptors(in: context)
            var problems = RemoteResponder.problems(in: options, model: context.model)
            let missing = context.model.entities.map(\.name).filter { options.entities[$0] == nil }.sorted()
            if !missing.isEmpty {
                problems.append(
                    StoreChainError(
                        .invalidPipeline,
                        "the remote terminal cannot serve \(missing.joined(separator: ", ")): no mapping under 'entities'",
                        at: .init(path: "entities"),
                        suggestion: "add an entry with its endpoints for each entity of the model"))
            }
            guard problems.isEmpty else { throw ValidationFailure(problems) }
            return try RemoteResponder(
                model: context.model, options: options, interceptors: interceptors, environment: context.environment)
        }
        registry.registerInterceptor("request-id", options: RequestIDInterceptor.self) { interceptor, _ in
            interceptor
        }
        registry.registerInterceptor("token-file", options: TokenFileInterceptor.Options.self) { options, context in
            TokenFileInterceptor(
                url: context.url(forPath: options.path), header: options.header, prefix: options.prefix)
        }
        registry.registerTerminal("json-file", options: FileTerminalOptions.self) { options, context in
            try JSONFileStore(contentsOf: context.url(forPath: options.path), model: context.model).store
        }
        registry.registerTerminal("sqlite", options: SQLiteTerminalOptions.self) { options, context in
            let seed = try options.seed.map { path throws(StoreChainError) in
                try JSONFileStore(contentsOf: context.url(forPath: path), model: context.model).store.snapshot
            }
            if context.validatesOnly { return InMemoryStore(model: context.model, dataset: seed ?? Dataset()) }
            return try SQLiteStore(
                path: context.url(forPath: options.path).path, model: context.model,
                seed: seed?.allNodes(model: context.model))
        }
        registry.registerTerminal("in-memory", options: InMemoryTerminalOptions.self) { options, context in
            guard let path = options.records else { return InMemoryStore(model: context.model) }
            return try JSONFileStore(contentsOf: context.url(forPath: path), model: context.model).store
        }
        #if Postgres
            registry.registerPostgres()
        #else
            registry.registerPostgresTraitMissing()
        #endif
        return registry
    }
}

extension ObjectModel {
    /// Throws when an option names entities the model does not have.
    func checkEntities(_ names: [String], option: String) throws(StoreChainError) {
        for name in names where entity(named: name) == nil {
            throw StoreChainError(
                .invalidPipeline, "'\(option)' names entity '\(name)', which the model does not have",
                at: .init(path: "\(option).\(name)"),
                suggestion: Suggestion.didYouMean(name, in: entities.map(\.name)))
        }
    }
}

/// A handler whose file a pipeline check does not open: it forwards everything.
private struct NotOpened: StoreHandler {
    let name: String

    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        try await next(request, context)
    }
}

/// `memory-cache`: the options both caches take and the memory's limits, each read by its own type.
struct MemoryCacheFileOptions: Decodable {
    let cache: CacheOptions
    let limits: MemoryCacheStorage.Limits

    init(from decoder: any Decoder) throws {
        cache = try CacheOptions(from: decoder)
        limits = try MemoryCacheStorage.Limits(from: decoder)
    }
}

/// `disk-cache`: the options both caches take and the file's, each read by its own type.
struct DiskCacheFileOptions: Decodable {
    let cache: CacheOptions
    let file: DiskCacheFile

    init(from decoder: any Decoder) throws {
        cache = try CacheOptions(from: decoder)
        file = try DiskCacheFile(from: decoder)
    }
}

/// `json-file: { path: music.json }`.
struct FileTerminalOptions: Decodable {
    var path: String
}

/// `sqlite: { path: data/music.sqlite, seed: music.json }`.
struct SQLiteTerminalOptions: Decodable {
    var path: String
    /// Records a new, empty store starts with.
    var seed: String?
}

/// `in-memory: {}` or `in-memory: { records: music.json }`.
struct InMemoryTerminalOptions: Decodable {
    var records: String?
}
