import Logging
import PostgresNIO
import StoreChain

/// The tables of a PostgreSQL cache (and of shared rate limits), in a schema of their own: nodes, query windows and complete
/// collections, each row under the `namespace` of the source its data comes from (so pipelines
/// of several backends can share a database). Created on first use; tables written by another
/// schema version are dropped and made again.
struct PostgresCacheSchema: Sendable {
    /// The layout this code writes.
    static let version = 3

    /// The schema's name, checked to be a plain identifier.
    let name: String

    /// Checks `name` is a lowercase SQL identifier, so it can be written into statements.
    init(_ name: String) throws(StoreChainError) {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_")
        }
        guard allowed, let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            name.utf8.count <= 63
        else {
            throw StoreChainError(
                .invalidPipeline, "'\(name)' cannot be a PostgreSQL schema name here", at: .init(path: "schema"),
                suggestion: "use lowercase letters, digits and '_' (at most 63, not starting with a digit)")
        }
        self.name = name
    }

    var nodes: String { "\(name).nodes" }
    var queries: String { "\(name).queries" }
    var collections: String { "\(name).collections" }
    /// How many saves of each entity every process has stored, per namespace
    /// (`PostgresCacheStorage.catchUpWithOtherProcesses`).
    var saveCounts: String { "\(name).save_counts" }
    /// Shared rate limits (`PostgresSharedRateLimit`), one row per key.
    var rateLimits: String { "\(name).rate_limits" }

    /// Creates the tables if they are missing, or remakes them when another version wrote them.
    /// Processes starting together take turns (an advisory lock for the transaction).
    func prepare(on connection: PostgresConnection, logger: Logger) async throws {
        try await create(on: connection, logger: logger)
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS \(unescaped: name).meta (key text PRIMARY KEY, value text NOT NULL)",
            logger: logger)
        var found: String?
        for try await value in try await connection.query(
            "SELECT value FROM \(unescaped: name).meta WHERE key = 'schema-version'", logger: logger
        ).decode(String.self) {
            found = value
        }
        if found == String(Self.version) { return }
        if let found {
            logger.warning(
                "postgres-cache: schema \(name) was written by schema version \(found), not \(Self.version); remaking its tables"
            )
        }
        for table in ["nodes", "queries", "collections", "save_counts"] {
            try await connection.query("DROP TABLE IF EXISTS \(unescaped: name).\(unescaped: table)", logger: logger)
        }
        for statement in statements {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await connection.query(
            """
            INSERT INTO \(unescaped: name).meta (key, value) VALUES ('schema-version', \(String(Self.version)))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, logger: logger)
    }

    /// Creates the schema if it is missing, and holds the schema's lock until the transaction
    /// ends, so processes starting together make its tables one at a time.
    func create(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext(\("storechain.schema." + name)))", logger: logger)
        try await connection.query("CREATE SCHEMA IF NOT EXISTS \(unescaped: name)", logger: logger)
    }

    /// Throws when `url` or the schema name cannot be used, saying which and why; connects to
    /// nothing.
    static func check(url: String, schema: String) throws(StoreChainError) {
        _ = try PostgresAddress(url: url)
        _ = try PostgresCacheSchema(schema)
    }

    private var statements: [String] {
        [
            """
            CREATE TABLE \(nodes) (namespace text NOT NULL, id text NOT NULL, entity text NOT NULL, \
            payload bytea NOT NULL, freshness text NOT NULL, size integer NOT NULL, \
            last_used double precision NOT NULL, seq bigserial, PRIMARY KEY (namespace, id))
            """,
            "CREATE INDEX ON \(nodes) (namespace, entity, seq)",
            "CREATE INDEX ON \(nodes) (namespace, last_used)",
            """
            CREATE TABLE \(queries) (namespace text NOT NULL, key text NOT NULL, shape text NOT NULL, \
            entity text NOT NULL, reads text[] NOT NULL, payload bytea NOT NULL, freshness text NOT NULL, \
            size integer NOT NULL, last_used double precision NOT NULL, PRIMARY KEY (namespace, key))
            """,
            "CREATE INDEX ON \(queries) (namespace, shape)",
            "CREATE INDEX ON \(queries) USING gin (reads)",
            """
            CREATE TABLE \(collections) (namespace text NOT NULL, entity text NOT NULL, freshness text NOT NULL, \
            PRIMARY KEY (namespace, entity))
            """,
            """
            CREATE TABLE \(saveCounts) (namespace text NOT NULL, entity text NOT NULL, count bigint NOT NULL, \
            PRIMARY KEY (namespace, entity))
            """,
        ]
    }
}
