import Foundation
import Logging
import PostgresNIO
import StoreChain
import Synchronization

/// A rate limit shared by every process that names the same server, schema and key: one row in
/// `<schema>.rate_limits` holds the theoretical arrival time and the pause, and each slot is one
/// `UPDATE … RETURNING` on it (the row lock makes it atomic). A `Retry-After` one process sees
/// pauses all of them.
///
/// When the server cannot be reached, `RateLimiter` limits each process alone (so N processes
/// may together reach N times the rate until it is back).
public final class PostgresSharedRateLimit: SharedRateLimit {
    public let address: PostgresAddress
    /// The limit's name: processes with the same key share one limit.
    public let key: String
    let schema: PostgresCacheSchema
    let connections: PostgresConnections
    private let logger: Logger
    private let prepared = Atomic<Bool>(false)

    /// A limit named `key` in `schema` (its table is created on first use) of the server at
    /// `address`. `user` names it in log lines and errors; `clock` times the pause between
    /// attempts to reach a server that is down.
    public init(
        address: PostgresAddress, key: String, schema: String = "storechain", user: String = "rate-limit",
        clock: any StoreClock = SystemClock(), logger: Logger = Logger(label: "storechain.rate-limit")
    ) throws(StoreChainError) {
        self.address = address
        self.key = key
        self.schema = try PostgresCacheSchema(schema)
        self.logger = logger
        connections = PostgresConnections(address: address, user: user, clock: clock, logger: logger)
    }

    public func reserve(now: Date, interval: TimeInterval, tolerance: TimeInterval, refuseAfter: Date?) async throws
        -> Date
    {
        try await prepareOnce()
        let now = now.timeIntervalSince1970
        // Refusing reserves nothing: the arrival time stays as it was.
        let refuse = refuseAfter?.timeIntervalSince1970 ?? .infinity
        let start = "greatest(greatest(tat, \(now)) - \(tolerance), \(now), paused_until)"
        let rows = try await connections.withSharedConnection { [self] connection in
            try await connection.query(
                """
                UPDATE \(unescaped: schema.rateLimits) SET
                    last_start = \(unescaped: start),
                    tat = CASE WHEN \(unescaped: start) > \(now) AND \(unescaped: start) >= \(refuse) THEN tat
                               ELSE greatest(greatest(tat, \(now)), \(unescaped: start)) + \(interval) END
                WHERE key = \(key)
                RETURNING last_start
                """, logger: logger
            ).collect()
        }
        guard let row = rows.first else {
            throw StoreChainError(.sharedState, "the rate limit '\(key)' has no row in \(schema.rateLimits)")
        }
        return Date(timeIntervalSince1970: try row.decode(Double.self))
    }

    public func pause(until date: Date) async throws {
        try await prepareOnce()
        let until = date.timeIntervalSince1970
        try await connections.withSharedConnection { [self] connection in
            try await connection.query(
                """
                UPDATE \(unescaped: schema.rateLimits) SET paused_until = greatest(paused_until, \(until))
                WHERE key = \(key)
                """, logger: logger)
        }
    }

    public func delayNextSlot(until date: Date) async throws {
        try await prepareOnce()
        let until = date.timeIntervalSince1970
        try await connections.withSharedConnection { [self] connection in
            try await connection.query(
                "UPDATE \(unescaped: schema.rateLimits) SET tat = greatest(tat, \(until)) WHERE key = \(key)",
                logger: logger)
        }
    }

    /// Creates the table and this key's row if they are missing.
    private func prepareOnce() async throws {
        guard !prepared.load(ordering: .acquiring) else { return }
        try await connections.withTransaction { [self] connection in
            try await schema.create(on: connection, logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: schema.rateLimits) (key text PRIMARY KEY,
                    tat double precision NOT NULL, paused_until double precision NOT NULL,
                    last_start double precision NOT NULL)
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO \(unescaped: schema.rateLimits) (key, tat, paused_until, last_start) VALUES (\(key), 0, 0, 0)
                ON CONFLICT (key) DO NOTHING
                """, logger: logger)
        }
        prepared.store(true, ordering: .releasing)
    }
}

/// Where a shared rate limit keeps its state: `rate-limit: { rate: 40/s, burst: 10, shared: {
/// url: "postgres://app:${PGPASSWORD}@db:5432/app", key: music-api } }`.
public struct SharedRateLimitDatabase: Sendable, Hashable, Decodable {
    /// `postgres://user:password@host:port/database` (the password is never logged).
    public var url: String
    /// The limit's name: every process with the same key (and server and schema) shares it.
    public var key: String
    /// The schema holding the `rate_limits` table (created on first use).
    public var schema: String

    public init(url: String, key: String, schema: String = "storechain") {
        self.url = url
        self.key = key
        self.schema = schema
    }

    private enum CodingKeys: String, CodingKey {
        case url, key, schema
    }

    /// Reads `url` and `key` (required) and `schema`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            url: try container.decode(String.self, forKey: .url), key: try container.decode(String.self, forKey: .key),
            schema: try container.decodeIfPresent(String.self, forKey: .schema) ?? "storechain")
    }

    /// Throws when the URL or the schema name cannot be used, saying which and why; connects to
    /// nothing.
    public func check() throws(StoreChainError) {
        try PostgresCacheSchema.check(url: url, schema: schema)
    }
}

extension PostgresSharedRateLimit {
    /// The shared limit `database` describes.
    public convenience init(
        _ database: SharedRateLimitDatabase, user: String = "rate-limit",
        logger: Logger = Logger(label: "storechain.rate-limit")
    ) throws(StoreChainError) {
        try self.init(
            address: try PostgresAddress(url: database.url), key: database.key, schema: database.schema, user: user,
            logger: logger)
    }
}
