import Foundation
import Logging
import StoreChain
import StoreChainHTTP
import StoreChainSQLite

extension HandlerRegistry {
    /// The built-in handler types — `logging`, `metrics`, `memory-cache`, `disk-cache`,
    /// `pagination`, `rate-limit`, `retry`, `batching` — and terminals — `remote`, `sqlite`,
    /// `json-file`, `in-memory` — and the remote terminal's HTTP interceptors — `request-id`,
    /// `token-file`. Their options are documented in `Docs/Pipelines.md`.
    public static var standard: HandlerRegistry {
        var registry = HandlerRegistry()
        registry.register("logging", options: LoggingFileOptions.self) { options, _ in
            LoggingHandler(level: options.level?.level ?? .info, secrets: Set(options.secrets ?? []))
        }
        registry.register("metrics", options: MetricsFileOptions.self) { options, _ in
            MetricsHandler(prefix: options.prefix ?? "storechain")
        }
        registry.register("memory-cache", options: CacheFileOptions.self, placement: .cache) { options, context in
            MemoryCache(
                model: context.model,
                limits: .init(
                    maxObjects: options.maxObjects?.value ?? 10_000, maxBytes: options.maxSize?.bytes ?? 64 << 20),
                options: try options.cacheOptions(model: context.model))
        }
        registry.register("disk-cache", options: CacheFileOptions.self, placement: .cache) { options, context in
            guard let path = options.path else {
                throw StoreChainError(
                    .invalidPipeline, "disk-cache needs a 'path'", suggestion: "add 'path: cache/music.sqlite'")
            }
            if context.validatesOnly { return MemoryCache(model: context.model) }
            return DiskCache(
                model: context.model, path: context.cacheURL(forPath: path).path,
                namespace: options.namespace ?? context.cacheNamespace,
                maxBytes: options.maxSize?.bytes ?? 200 << 20, compresses: options.compress ?? true,
                options: try options.cacheOptions(model: context.model))
        }
        registry.register("pagination", options: PaginationFileOptions.self, placement: .pagination) {
            options, context in
            try context.model.checkEntities(options.pageSizes.map { Array($0.keys) } ?? [], option: "page-sizes")
            return PaginationHandler(
                model: context.model,
                options: PaginationOptions(
                    pageSize: options.pageSize?.value, pageSizes: options.pageSizes?.mapValues(\.value) ?? [:],
                    maxPages: options.maxPages?.value ?? 1_000, concurrency: options.concurrency?.value ?? 4))
        }
        registry.register("rate-limit", options: RateLimitFileOptions.self, placement: .traffic) { options, _ in
            RateLimitHandler(
                options: RateLimitOptions(
                    rate: options.rate.perSecond, burst: options.burst?.value ?? 1,
                    maxInFlight: options.maxInFlight?.value,
                    mode: options.mode ?? .wait))
        }
        registry.register("retry", options: RetryFileOptions.self, placement: .traffic) { options, _ in
            let defaults = RetryOptions()
            return RetryHandler(
                options: RetryOptions(
                    maxAttempts: options.attempts?.value ?? defaults.maxAttempts,
                    baseDelay: options.baseDelay?.duration ?? defaults.baseDelay,
                    maxDelay: options.maxDelay?.duration ?? defaults.maxDelay,
                    retriesSaves: options.retrySaves ?? false))
        }
        registry.register("batching", options: BatchingFileOptions.self, placement: .batching) { options, context in
            try context.model.checkEntities(options.entities, option: "entities")
            return BatchingHandler(
                model: context.model,
                options: BatchingOptions(
                    entities: Set(options.entities), window: options.window?.duration ?? .milliseconds(5),
                    maxBatch: options.maxBatch?.value ?? 100, maxDelay: options.maxDelay?.duration ?? .milliseconds(50))
            )
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
        registry.registerInterceptor("request-id", options: RequestIDFileOptions.self) { options, _ in
            RequestIDInterceptor(header: options.header ?? "X-Request-ID")
        }
        registry.registerInterceptor("token-file", options: TokenFileOptions.self) { options, context in
            TokenFileInterceptor(
                url: context.url(forPath: options.path), header: options.header ?? "Authorization",
                prefix: options.prefix ?? "Bearer ")
        }
        registry.registerTerminal("json-file", options: FileTerminalOptions.self) { options, context in
            try JSONFileStore(contentsOf: context.url(forPath: options.path), model: context.model).store
        }
        registry.registerTerminal("sqlite", options: SQLiteTerminalOptions.self) { options, context in
            let seed = try options.seed.map { path throws(StoreChainError) in
                try JSONFileStore(contentsOf: context.url(forPath: path), model: context.model).store.snapshot
            }
            if context.validatesOnly { return InMemoryStore(model: context.model, dataset: seed ?? Dataset()) }
            return try SQLiteStore(path: context.url(forPath: options.path).path, model: context.model, seed: seed)
        }
        registry.registerTerminal("in-memory", options: InMemoryTerminalOptions.self) { options, context in
            guard let path = options.records else { return InMemoryStore(model: context.model) }
            return try JSONFileStore(contentsOf: context.url(forPath: path), model: context.model).store
        }
        return registry
    }
}

extension Model {
    /// Throws when an option names entities the model does not have.
    fileprivate func checkEntities(_ names: [String], option: String) throws(StoreChainError) {
        for name in names where entity(named: name) == nil {
            throw StoreChainError(
                .invalidPipeline, "'\(option)' names entity '\(name)', which the model does not have",
                at: .init(path: "\(option).\(name)"),
                suggestion: Suggestion.didYouMean(name, in: entities.map(\.name)))
        }
    }
}

/// `logging: { level: info, secrets: [api_key] }`.
struct LoggingFileOptions: Decodable {
    enum Level: String, CaseIterable, Decodable {
        case trace, debug, info, notice, warning, error, critical

        init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "log level")
        }

        var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }
    }

    var level: Level?
    var secrets: [String]?
}

/// `metrics: { prefix: storechain }`.
/// `request-id`: `{ header: X-Request-ID }`.
struct RequestIDFileOptions: Decodable {
    var header: String?
}

/// `token-file`: `{ path: /run/secrets/api-token, header: Authorization, prefix: "Bearer " }`.
struct TokenFileOptions: Decodable {
    var path: String
    var header: String?
    var prefix: String?
}

struct MetricsFileOptions: Decodable {
    var prefix: String?
}

/// `memory-cache` and `disk-cache`: `{ ttl: 5m, entity-ttl: { Track: 1h }, max-objects: 10000,
/// max-size: 200MB, stale-while-revalidate: 1d, stale-if-error: 1d, honour-response-headers: true,
/// heuristic: false, path: cache/music.sqlite, compress: true }`.
struct CacheFileOptions: Decodable {
    var ttl: TimeSpan?
    var entityTtl: [String: TimeSpan]?
    var maxObjects: PositiveCount?
    var maxSize: ByteSize?
    var staleWhileRevalidate: TimeSpan?
    var staleIfError: TimeSpan?
    var honourResponseHeaders: Bool?
    var heuristic: Bool?
    var path: String?
    var namespace: String?
    var compress: Bool?

    func cacheOptions(model: Model) throws(StoreChainError) -> CacheOptions {
        try model.checkEntities(entityTtl.map { Array($0.keys) } ?? [], option: "entity-ttl")
        let defaults = CacheExpiry()
        return CacheOptions(
            expiry: CacheExpiry(
                defaultTTL: ttl?.duration ?? defaults.defaultTTL, entityTTL: entityTtl?.mapValues(\.duration) ?? [:],
                honoursResponseHeaders: honourResponseHeaders ?? true, heuristic: heuristic ?? false),
            staleIfError: staleIfError?.duration ?? .seconds(86_400),
            staleWhileRevalidate: staleWhileRevalidate?.duration)
    }
}

/// `pagination: { page-size: 50, page-sizes: { Track: 100 }, max-pages: 200, concurrency: 4 }`.
struct PaginationFileOptions: Decodable {
    var pageSize: PositiveCount?
    var pageSizes: [String: PositiveCount]?
    var maxPages: PositiveCount?
    var concurrency: PositiveCount?
}

/// `rate-limit: { rate: 10/s, burst: 20, max-in-flight: 4, mode: wait }`.
struct RateLimitFileOptions: Decodable {
    var rate: Rate
    var burst: PositiveCount?
    var maxInFlight: PositiveCount?
    var mode: RateLimitOptions.Mode?
}

/// `retry: { attempts: 4, base-delay: 200ms, max-delay: 10s, retry-saves: false }`.
struct RetryFileOptions: Decodable {
    var attempts: PositiveCount?
    var baseDelay: TimeSpan?
    var maxDelay: TimeSpan?
    var retrySaves: Bool?
}

/// `batching: { entities: [Track], window: 5ms, max-batch: 100, max-delay: 50ms }`.
struct BatchingFileOptions: Decodable {
    var entities: [String]
    var window: TimeSpan?
    var maxBatch: PositiveCount?
    var maxDelay: TimeSpan?
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
