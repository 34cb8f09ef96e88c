import Foundation
import Logging
import PostgresNIO
import StoreChain
import StoreChainSQLite
import Synchronization

/// Cache storage in PostgreSQL, shared by every process that names the same server, schema and
/// namespace: what one process fetched, the others read. Nodes are stored in the disk cache's
/// compact binary layout (with its checksum), query windows as JSON, freshness as JSON.
///
/// Every method runs off the caller's executor (`@concurrent`), and the server's unavailability
/// never fails a request: the cache handler logs the storage's error and goes upstream, and the
/// connections try the server again after `PostgresConnections.retryInterval`.
public final class PostgresCacheStorage: CacheStorage, SaveOrderSharing {
    /// Where the server is (its description leaves the password out).
    public let address: PostgresAddress
    /// What the cached data comes from: processes share only entries of the same namespace.
    public let namespace: String
    /// Upper bound on stored payload bytes of this namespace; least recently used entries go
    /// first.
    public let maxBytes: Int
    /// How long a process waits for another's answer to a request both miss (`nil`: it does not
    /// wait, and asks upstream at once).
    public let claimWait: Duration?
    let schema: PostgresCacheSchema
    let connections: PostgresConnections
    /// Tells this storage's changes to the other processes, and theirs to this one's readers.
    let listener: PostgresChangeListener
    /// Identifies this storage's notices among those of every process.
    private let id = UUID().uuidString
    let logger: Logger
    /// Whether the tables are known to exist.
    private let prepared = Atomic<Bool>(false)
    /// Recently used entries, marked with the next write.
    let touches = Mutex<(nodes: Set<String>, queries: Set<String>)>(([], []))
    private let writes = Atomic<Int>(0)
    /// Called before each use of the server, where it runs (tests check it is off the caller's
    /// executor).
    let accessProbe = Mutex<(@Sendable () -> Void)?>(nil)
    /// This process's order of saves over the namespace, kept by every cache over this storage;
    /// the other processes' saves reach it through the counts the database keeps.
    package let saveOrder = SaveOrder()
    /// The entities known to have a row in the counts of saves.
    let countedEntities = Mutex<Set<String>>([])

    /// A storage in `schema` (created on first use) of the server at `address`. `user` names the
    /// cache in log lines and errors (a pipeline passes its type and line); `claimWait` bounds how
    /// long a miss waits for another process fetching the same; `clock` times the
    /// pause between attempts to reach a server that is down.
    public init(
        address: PostgresAddress, schema: String = "storechain", namespace: String? = nil, maxBytes: Int = 1 << 30,
        claimWait: Duration? = .seconds(5), user: String = "postgres-cache", clock: any StoreClock = SystemClock(),
        logger: Logger = Logger(label: "storechain.postgres-cache")
    ) throws(StoreChainError) {
        self.address = address
        self.schema = try PostgresCacheSchema(schema)
        self.namespace = namespace ?? ""
        self.maxBytes = maxBytes
        self.claimWait = claimWait
        self.logger = logger
        let connections = PostgresConnections(address: address, user: user, clock: clock, logger: logger)
        self.connections = connections
        listener = PostgresChangeListener(
            channel: PostgresChangeNotice.channel(schema: self.schema.name), namespace: namespace ?? "", ownID: id,
            source: "\(user) (another process)", connections: connections, clock: clock, logger: logger)
    }

    public var origin: ResponseInfo.Origin { .disk }

    // MARK: Reading

    @concurrent public func queries(shape: String) async throws -> [CachedQuery] {
        let rows = try await read(
            "SELECT key, payload, freshness FROM \(unescaped: schema.queries) WHERE namespace = \(namespace) AND shape = \(shape)"
        )
        var decoder = RowDecoder()
        var found: [(key: String, query: CachedQuery)] = []
        var damaged: [String] = []
        for row in rows {
            let (key, payload, freshness) = try row.decode((String, Data, String).self)
            do {
                let stored = try JSONDecoder().decode(StoredQuery.self, from: payload)
                found.append((key, stored.cachedQuery(freshness: try decoder.freshness(freshness))))
            } catch {
                damaged.append(key)
                logger.warning("postgres-cache: a damaged query window in \(schema.queries) is dropped: \(error)")
            }
        }
        if !damaged.isEmpty {
            try await modify { [self, damaged] connection in
                try await connection.query(
                    "DELETE FROM \(unescaped: schema.queries) WHERE namespace = \(namespace) AND key = ANY(\(damaged))",
                    logger: logger)
            }
        }
        touches.withLock { $0.queries.formUnion(found.map(\.key)) }
        return found.map(\.query)
    }

    @concurrent public func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] {
        let keys = ids.compactMap { try? StoredNode.key(for: $0) }
        guard !keys.isEmpty else { return [:] }
        let rows = try await read(
            "SELECT id, payload, freshness FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace) AND id = ANY(\(keys))"
        )
        let nodes = try await decodeNodes(rows)
        touches.withLock { $0.nodes.formUnion(nodes.map(\.key)) }
        return Dictionary(nodes.map { ($0.node.id, $0.node) }, uniquingKeysWith: { first, _ in first })
    }

    @concurrent public func collection(_ entity: String) async throws -> Freshness? {
        let rows = try await read(
            "SELECT freshness FROM \(unescaped: schema.collections) WHERE namespace = \(namespace) AND entity = \(entity)"
        )
        var decoder = RowDecoder()
        return try rows.first.map { row in try decoder.freshness(try row.decode(String.self)) }
    }

    /// Every cached node of `entity`, in the order they were first stored (the handler applies
    /// the predicate).
    @concurrent public func nodes(of entity: String, matching predicate: FetchPredicate?) async throws -> [Node] {
        let rows = try await read(
            """
            SELECT id, payload, freshness FROM \(unescaped: schema.nodes)
            WHERE namespace = \(namespace) AND entity = \(entity) ORDER BY seq
            """)
        let nodes = try await decodeNodes(rows)
        guard nodes.count == rows.count else {
            throw StoreChainError(
                .cacheFile, "damaged cached objects of \(entity) were dropped from \(schema.nodes)",
                suggestion: "nothing to do: they are fetched again")
        }
        return nodes.map(\.node)
    }

    /// Decodes node rows; damaged ones are logged and deleted, with the complete collections of
    /// their entities (which no longer hold them).
    private func decodeNodes(_ rows: [PostgresRow]) async throws -> [(key: String, node: Node)] {
        var decoder = RowDecoder()
        var names: [String] = []
        var nodes: [(key: String, node: Node)] = []
        nodes.reserveCapacity(rows.count)
        var damaged: [String] = []
        for row in rows {
            let (key, payload, freshness) = try row.decode((String, Data, String).self)
            do {
                let node = try NodePayload.decode(
                    payload, freshness: try decoder.freshness(freshness), sharingNames: &names)
                nodes.append((key, node))
            } catch {
                damaged.append(key)
                logger.warning("postgres-cache: a damaged entry in \(schema.nodes) is dropped: \(error)")
            }
        }
        if !damaged.isEmpty {
            try await modify { [self, damaged] connection in
                try await connection.query(
                    """
                    WITH gone AS (DELETE FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace) AND id = ANY(\(damaged))
                                  RETURNING entity)
                    DELETE FROM \(unescaped: schema.collections)
                    WHERE namespace = \(namespace) AND entity IN (SELECT entity FROM gone)
                    """, logger: logger)
            }
        }
        return nodes
    }

    // MARK: Writing

    @concurrent public func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        let rows = try NodeRows(write.nodes)
        let queries = try write.storedQueries.map { query throws in
            (
                query, payload: try JSONEncoder().encode(try StoredQuery(query)),
                freshness: try RowEncoder.text(query.freshness)
            )
        }
        let collections = try write.collections.map { (entity: $0.key, freshness: try RowEncoder.text($0.value)) }
        let removedKeys = Dictionary(
            write.removed.compactMap { id in (try? StoredNode.key(for: id)).map { ($0, id) } },
            uniquingKeysWith: { first, _ in first })
        try await ensureSaveCounts(of: write.entities.union(write.invalidated))
        let removed = try await modify { [self] connection in
            var removed = Set<ObjectID>()
            try await catchUpWithOtherProcesses(for: write, on: connection)
            guard write.holds else { return removed }
            try await recordSave(of: write.invalidated, on: connection)
            try await markUse(on: connection)
            if !write.invalidated.isEmpty {
                let entities = write.invalidated.sorted()
                try await connection.query(
                    "DELETE FROM \(unescaped: schema.queries) WHERE namespace = \(namespace) AND reads && \(entities)",
                    logger: logger)
            }
            if !write.incomplete.isEmpty {
                let entities = write.incomplete.sorted()
                try await connection.query(
                    "DELETE FROM \(unescaped: schema.collections) WHERE namespace = \(namespace) AND entity = ANY(\(entities))",
                    logger: logger)
            }
            if !removedKeys.isEmpty {
                let keys = removedKeys.keys.sorted()
                for try await key in try await connection.query(
                    "DELETE FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace) AND id = ANY(\(keys)) RETURNING id",
                    logger: logger
                ).decode(String.self) {
                    if let id = removedKeys[key] { removed.insert(id) }
                }
            }
            if !rows.keys.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schema.nodes) (namespace, id, entity, payload, freshness, size, last_used)
                    SELECT \(namespace), id, entity, payload, freshness, size, extract(epoch FROM clock_timestamp())
                    FROM unnest(\(rows.keys)::text[], \(rows.entities)::text[], \(rows.payloads)::bytea[],
                                \(rows.freshness)::text[], \(rows.sizes)::integer[])
                         AS row (id, entity, payload, freshness, size)
                    ON CONFLICT (namespace, id) DO UPDATE SET entity = excluded.entity, payload = excluded.payload,
                        freshness = excluded.freshness, size = excluded.size, last_used = excluded.last_used
                    """, logger: logger)
            }
            for collection in collections {
                let kept = rows.keys(of: collection.entity)
                for try await key in try await connection.query(
                    """
                    DELETE FROM \(unescaped: schema.nodes)
                    WHERE namespace = \(namespace) AND entity = \(collection.entity) AND NOT (id = ANY(\(kept)))
                    RETURNING id
                    """, logger: logger
                ).decode(String.self) {
                    if let id = try? StoredNode.id(forKey: key) { removed.insert(id) }
                }
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schema.collections) (namespace, entity, freshness)
                    VALUES (\(namespace), \(collection.entity), \(collection.freshness))
                    ON CONFLICT (namespace, entity) DO UPDATE SET freshness = excluded.freshness
                    """, logger: logger)
            }
            // Delivered when the transaction commits, so others read the change they hear of.
            for notice in PostgresChangeNotice.notices(for: write, removed: removed, from: id, namespace: namespace) {
                try await connection.query("SELECT pg_notify(\(listener.channel), \(notice))", logger: logger)
            }
            for query in queries {
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schema.queries) (namespace, key, shape, entity, reads, payload, freshness, size,
                                                            last_used)
                    VALUES (\(namespace), \(query.0.key), \(query.0.shape), \(query.0.request.entity),
                            \(query.0.reads.sorted()), \(query.payload), \(query.freshness), \(query.payload.count),
                            extract(epoch FROM clock_timestamp()))
                    ON CONFLICT (namespace, key) DO UPDATE SET shape = excluded.shape, entity = excluded.entity,
                        reads = excluded.reads,
                        payload = excluded.payload, freshness = excluded.freshness, size = excluded.size,
                        last_used = excluded.last_used
                    """, logger: logger)
            }
            return removed
        }
        // The total size is summed every 16 writes, not on each.
        if writes.add(1, ordering: .relaxed).newValue % 16 == 0 { try await evict() }
        return removed
    }

    @concurrent public func refresh(_ target: CacheTarget, freshness: Freshness) async throws {
        let text = try RowEncoder.text(freshness)
        try await modify { [self] connection in
            switch target {
            case .query(let key):
                try await connection.query(
                    """
                    UPDATE \(unescaped: schema.queries) SET freshness = \(text)
                    WHERE namespace = \(namespace) AND key = \(key)
                    """, logger: logger)
            case .collections(let entities):
                try await connection.query(
                    """
                    UPDATE \(unescaped: schema.collections) SET freshness = \(text)
                    WHERE namespace = \(namespace) AND entity = ANY(\(entities.sorted()))
                    """, logger: logger)
            case .node(let id):
                try await connection.query(
                    """
                    UPDATE \(unescaped: schema.nodes) SET freshness = \(text)
                    WHERE namespace = \(namespace) AND id = \(try StoredNode.key(for: id))
                    """, logger: logger)
            }
        }
    }

    /// Erases this namespace's entries (other namespaces in the schema are left alone).
    @concurrent public func clear() async throws {
        try await modify { [self] connection in
            for table in [schema.nodes, schema.queries, schema.collections] {
                try await connection.query(
                    "DELETE FROM \(unescaped: table) WHERE namespace = \(namespace)", logger: logger)
            }
        }
    }

    // MARK: Internals

    /// The rows of one statement, read on the shared connection once the tables exist.
    private func read(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await prepareOnce()
        return try await connections.withSharedConnection { [self] connection in
            try await connection.query(query, logger: logger).collect()
        }
    }

    /// Runs `body` in a transaction once the tables exist.
    @discardableResult
    func modify<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await prepareOnce()
        return try await connections.withTransaction(body)
    }

    private func prepareOnce() async throws {
        accessProbe.withLock { $0 }?()
        guard !prepared.load(ordering: .acquiring) else { return }
        try await connections.withTransaction { [self] connection in
            try await schema.prepare(on: connection, logger: logger)
            try await learnSaveCounts(on: connection)
        }
        prepared.store(true, ordering: .releasing)
    }
}
