import Logging
import StoreChain

/// The shared cache: `CacheHandler` over PostgreSQL, so every process that names the same server,
/// schema and namespace reads what any of them fetched.
///
/// ```swift
/// let cache = try PostgresCache(
///     model: model, database: PostgresCacheDatabase(url: "postgres://app@db:5432/cache"),
///     namespace: remote.cacheNamespace)
/// ```
public typealias PostgresCache = CacheHandler<PostgresCacheStorage>

extension CacheHandler where Storage == PostgresCacheStorage {
    /// A cache in `database`, holding the data of `namespace` (pass the terminal's
    /// `cacheNamespace` unless the database says otherwise). `user` names it in log lines and
    /// errors.
    public convenience init(
        model: ObjectModel, database: PostgresCacheDatabase, namespace: String? = nil,
        options: CacheOptions = CacheOptions(),
        user: String = "postgres-cache", logger: Logger = Logger(label: "storechain.postgres-cache")
    ) throws(StoreChainError) {
        self.init(
            name: "postgres-cache", model: model,
            storage: try PostgresCacheStorage(
                address: try PostgresAddress(url: database.url), schema: database.schema,
                namespace: database.namespace ?? namespace, maxBytes: database.maxBytes,
                claimWait: database.claimWait, user: user, logger: logger),
            options: options)
    }
}

/// Where a PostgreSQL cache keeps its data: the server, the schema, the source it holds data for
/// and its size limit.
///
/// Pipeline files write it among the cache's options: `postgres-cache: { url:
/// "postgres://app:${PGPASSWORD}@db:5432/cache", schema: storechain, max-size: 1GB, ttl: 5m }`.
public struct PostgresCacheDatabase: Sendable, Hashable, Decodable {
    /// `postgres://user:password@host:port/database` (the password is never logged).
    public var url: String
    /// The schema holding the cache's tables (created on first use).
    public var schema: String
    /// What the data comes from; `nil` takes the terminal's `cacheNamespace`.
    public var namespace: String?
    /// The most bytes of payloads the namespace holds in the database.
    public var maxBytes: Int
    /// How long a process waits for another one fetching the same request before it asks
    /// upstream itself; `nil` (`claim-wait: 0s`): misses go upstream at once.
    public var claimWait: Duration?

    public init(
        url: String, schema: String = "storechain", namespace: String? = nil, maxBytes: Int = 1 << 30,
        claimWait: Duration? = .seconds(5)
    ) {
        self.url = url
        self.schema = schema
        self.namespace = namespace
        self.maxBytes = maxBytes
        self.claimWait = claimWait
    }

    /// Throws when the URL or the schema name cannot be used, saying which and why; connects to
    /// nothing.
    public func check() throws(StoreChainError) {
        try PostgresCacheSchema.check(url: url, schema: schema)
    }

    private enum CodingKeys: String, CodingKey {
        case url, schema, namespace, claimWait
        case maxBytes = "maxSize"
    }

    /// Reads `url` (required), `schema`, `namespace`, `max-size` and `claim-wait`; a key left out
    /// keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PostgresCacheDatabase(url: try container.decode(String.self, forKey: .url))
        self.init(
            url: defaults.url, schema: try container.decodeIfPresent(String.self, forKey: .schema) ?? defaults.schema,
            namespace: try container.decodeIfPresent(String.self, forKey: .namespace),
            maxBytes: try container.decodeIfPresent(ByteSize.self, forKey: .maxBytes)?.bytes ?? defaults.maxBytes,
            claimWait: try container.decodeIfPresent(TimeSpan.self, forKey: .claimWait).map {
                $0.duration == .zero ? nil : $0.duration
            } ?? defaults.claimWait)
    }
}
