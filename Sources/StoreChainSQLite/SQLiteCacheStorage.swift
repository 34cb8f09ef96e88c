import Foundation
import GRDB
import Logging
import StoreChain
import Synchronization

/// Cache storage in one SQLite file (WAL, concurrent readers): nodes, query windows and complete
/// collections, each with fetched-at, expires-at and validators in columns of their own. Nodes
/// are stored in a compact binary layout with a checksum (`NodePayload`), query windows as JSON;
/// payloads are compressed with zlib when that saves space. The file is owner-only.
///
/// A file holds the data of one source, its `namespace` (the pipeline's backend address and
/// mapping): opened for another source it is emptied first, and a process whose source no
/// longer owns the file (another process took it over) neither reads nor writes it.
///
/// A file that cannot be read (corrupt, truncated, not a database) is moved aside and rebuilt
/// with a logged warning; if no file can be used at all, every operation fails and the cache
/// handler carries on without it, from the backend.
public final class SQLiteCacheStorage: CacheStorage, SaveOrderSharing {
    /// The schema this code writes; a file with another version is rebuilt.
    public static let schemaVersion = 6

    /// The SQLite file's path.
    public let path: String
    /// What the cached data comes from; `nil` takes the file as it is, whatever wrote it.
    public let namespace: String?
    /// The model, for compiling predicates to SQL; `nil` filters nothing in SQL.
    public let model: ObjectModel?
    /// Upper bound on stored payload bytes; least recently used entries go first.
    public let maxBytes: Int
    /// Whether payloads are compressed (when that saves space).
    public let compresses: Bool
    let logger: Logger
    private let database = Locked<DatabasePool?>(nil)
    /// Whether the file was locked by another connection when it was opened: it is opened
    /// again on next use instead of being taken for damage.
    let lockedAtOpen = Atomic<Bool>(false)
    /// Recently used entries, written to the file with the next write.
    let touches = Locked<(nodes: Set<String>, queries: Set<String>)>(([], []))
    let useCounter = Atomic<Int>(0)
    /// Whether another source's takeover of the file has been logged.
    private let reportedTakeover = Atomic<Bool>(false)
    /// Called before each use of the file, where it runs (tests check it is off the caller's
    /// executor).
    let accessProbe = Locked<(@Sendable () -> Void)?>(nil)
    /// The target indexes tried in the file (`makeTargetIndexes`); emptied when it is rebuilt.
    let targetIndexes = Locked<Set<String>>([])
    /// The file's order of saves, kept by every cache over the file in this process.
    package let saveOrder: SaveOrder

    /// Opens (or creates) the cache file at `path` for data from `namespace`.
    public convenience init(
        path: String, namespace: String? = nil, model: ObjectModel? = nil, maxBytes: Int = 200 << 20,
        compresses: Bool = true, logger: Logger = Logger(label: "storechain.disk-cache")
    ) {
        self.init(
            path: path, namespace: namespace, model: model, maxBytes: maxBytes, compresses: compresses, logger: logger,
            saveOrder: SaveOrder.shared(for: URL(filePath: path).standardizedFileURL.resolvingSymlinksInPath().path))
    }

    /// Opens the file with an order of saves of its own: as another process would (tests).
    package init(
        path: String, namespace: String? = nil, model: ObjectModel? = nil, maxBytes: Int = 200 << 20,
        compresses: Bool = true, logger: Logger = Logger(label: "storechain.disk-cache"), saveOrder: SaveOrder
    ) {
        self.path = path
        self.namespace = namespace
        self.compresses = compresses
        self.model = model
        self.maxBytes = maxBytes
        self.logger = logger
        self.saveOrder = saveOrder
        database.withLock { $0 = openOrRebuild() }
    }

    public var origin: ResponseInfo.Origin { .disk }

    // MARK: Reading

    @concurrent public func queries(shape: String) async throws -> [CachedQuery] {
        let decoder = RowDecoder()
        let decoded = try decodeRows(in: "queries") { db in
            try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT rowid AS row_id, key, payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
                        FROM queries WHERE shape = ?
                        """), arguments: [shape])
        } decode: { row in
            let stored = try JSONDecoder().decode(StoredQuery.self, from: try Self.payload(row, decoder: decoder))
            let query = stored.cachedQuery(freshness: try Self.freshness(row, decoder: decoder))
            return (key: try row.decode(String.self, forColumn: "key"), query: query)
        }.decoded
        touches.withLock { $0.queries.formUnion(decoded.map(\.key)) }
        return decoded.map(\.query)
    }

    @concurrent public func queries(reading entities: Set<String>) async throws -> [CachedQuery] {
        let decoder = RowDecoder()
        var found: [String: CachedQuery] = [:]
        for entity in entities.sorted() {
            let decoded = try decodeRows(in: "queries") { db in
                try Row.fetchCursor(
                    db.cachedStatement(
                        sql: """
                            SELECT rowid AS row_id, key, payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
                            FROM queries WHERE instr(reads, ?) > 0
                            """), arguments: [" \(entity) "])
            } decode: { row in
                let stored = try JSONDecoder().decode(StoredQuery.self, from: try Self.payload(row, decoder: decoder))
                return stored.cachedQuery(freshness: try Self.freshness(row, decoder: decoder))
            }.decoded
            for query in decoded { found[query.key] = query }
        }
        return Array(found.values)
    }

    @concurrent public func nodes(_ ids: [ObjectID]) async throws -> [ObjectID: Node] {
        let keys = ids.compactMap { try? StoredNode.key(for: $0) }
        guard !keys.isEmpty else { return [:] }
        var found: [ObjectID: Node] = [:]
        found.reserveCapacity(keys.count)
        for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min(keys.count, $0 + 500)]) }) {
            let decoder = RowDecoder()
            let sql = """
                SELECT rowid AS row_id, payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
                FROM nodes WHERE id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))
                """
            let nodes = try decodeRows(in: "nodes") { db in
                // A fault (one key) reuses its prepared statement; lists of other lengths are
                // prepared each time rather than kept, one per length.
                let statement = chunk.count == 1 ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
                return try Row.fetchCursor(statement, arguments: StatementArguments(chunk))
            } decode: { row in
                try Self.node(row, decoder: decoder)
            }.decoded
            for node in nodes { found[node.id] = node }
            touches.withLock { $0.nodes.formUnion(nodes.compactMap { try? StoredNode.key(for: $0.id) }) }
        }
        return found
    }

    @concurrent public func collection(_ entity: String) async throws -> Freshness? {
        try read { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql:
                        "SELECT fetched_at, expires_at, etag, last_modified, page_validators, rules FROM collections WHERE entity = ?"
                ), arguments: [entity])
        }.map { row in try Self.freshness(row, decoder: RowDecoder()) }
    }

    /// The entity's nodes in the order they were first stored, filtered in SQL by what
    /// `SQLPredicate` can compile of `predicate`.
    @concurrent public func nodes(of entity: String, matching predicate: FetchPredicate?) async throws -> [Node] {
        let selection = NodeSelection(of: entity, matching: predicate, model: model)
        if !selection.targets.isEmpty { makeTargetIndexes(of: entity, selection.targets) }
        do {
            return try decodeNodes(of: entity) { db in
                let statement =
                    selection.isOwnerFilter
                    ? try db.cachedStatement(sql: selection.sql) : try db.makeStatement(sql: selection.sql)
                return try Row.fetchCursor(statement, arguments: selection.arguments)
            }
        } catch let error as DatabaseError where error.message == SQLPredicate.damagedPayload {
            // The filter met a payload it cannot read: every row of the entity is decoded, so
            // the damaged ones are found and dropped (and this read fails), never left unmatched.
            let all = NodeSelection.all(of: entity)
            return try decodeNodes(of: entity) { db in try Row.fetchCursor(db, sql: all.sql, arguments: all.arguments) }
        }
    }

    // MARK: Writing

    @concurrent public func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        let encoder = JSONEncoder()
        // The nodes of one response share their freshness: its columns are encoded once.
        var freshnessColumns: [Freshness: FreshnessColumns] = [:]
        var nodeRows: [NodeRow] = []
        nodeRows.reserveCapacity(write.nodes.count)
        for node in write.nodes where !node.id.isTemporary {
            let freshness = node.freshness ?? Freshness(expiresAt: .distantPast)
            let columns = freshnessColumns[freshness] ?? FreshnessColumns(freshness)
            freshnessColumns[freshness] = columns
            nodeRows.append(
                NodeRow(
                    key: try StoredNode.key(for: node.id), entity: node.id.entity,
                    payload: Payload(try NodePayload.encode(node), compressing: compresses), freshness: columns))
        }
        // The edited windows' condition is checked in the transaction.
        let queries = try ((write.query.map { [$0] } ?? []) + write.editedQueries).map { query in
            (query, payload: Payload(try encoder.encode(try StoredQuery(query)), compressing: compresses))
        }
        let ownCount = write.query == nil ? 0 : 1
        return try modify { db in
            let saveCounts = try catchUpWithOtherProcesses(db)
            guard write.holds else { return [] }
            try recordSave(of: write.invalidated, over: saveCounts, db)
            let decoder = RowDecoder()
            var removed = Set<ObjectID>()
            for entity in write.invalidated {
                try db.execute(sql: "DELETE FROM queries WHERE instr(reads, ?) > 0", arguments: [" \(entity) "])
            }
            for entity in write.incomplete {
                try db.execute(sql: "DELETE FROM collections WHERE entity = ?", arguments: [entity])
            }
            for id in write.removed where !id.isTemporary {
                let key = try StoredNode.key(for: id)
                try db.cachedStatement(sql: "DELETE FROM nodes WHERE id = ?").execute(arguments: [key])
                if db.changesCount > 0 { removed.insert(id) }
            }
            try insert(nodeRows, in: db)
            for (entity, freshness) in write.collections {
                let kept = Set(nodeRows.filter { $0.entity == entity }.map(\.key))
                // Every kept node was just written, so when the entity holds no more rows than
                // those, none is left to remove (a count from its index, not every key read).
                let held = try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM nodes WHERE entity = ?"), arguments: [entity])
                let stale =
                    held == kept.count
                    ? [] : try String.fetchAll(db, sql: "SELECT id FROM nodes WHERE entity = ?", arguments: [entity])
                for key in stale where !kept.contains(key) {
                    let node = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
                            FROM nodes WHERE id = ?
                            """, arguments: [key])
                    if let node { removed.insert(try Self.node(node, decoder: decoder).id) }
                    try db.cachedStatement(sql: "DELETE FROM nodes WHERE id = ?").execute(arguments: [key])
                }
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO collections (entity, fetched_at, expires_at, etag, last_modified,
                                                            page_validators, rules)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [entity] + Self.arguments(freshness))
            }
            let stored = write.editsHold ? queries.count : ownCount
            for (query, queryPayload) in queries.prefix(stored) {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO queries (key, shape, entity, reads, payload, compressed, raw_size,
                                                        size, fetched_at, expires_at, etag, last_modified,
                                                        page_validators, rules, last_used)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [query.key, query.shape, query.request.entity, Self.readsColumn(query.reads)]
                        + queryPayload.arguments
                        + Self.arguments(query.freshness) + [nextUse()])
            }
            try evict(db)
            return removed
        }
    }

    @concurrent public func refresh(_ target: CacheTarget, freshness: Freshness) async throws {
        let arguments = Self.arguments(freshness)
        try modify { db in
            let set = "fetched_at = ?, expires_at = ?, etag = ?, last_modified = ?, page_validators = ?, rules = ?"
            switch target {
            case .query(let key):
                try db.execute(sql: "UPDATE queries SET \(set) WHERE key = ?", arguments: arguments + [key])
            case .collections(let entities):
                for entity in entities {
                    try db.execute(
                        sql: "UPDATE collections SET \(set) WHERE entity = ?", arguments: arguments + [entity])
                }
            case .node(let id):
                try db.execute(
                    sql: "UPDATE nodes SET \(set) WHERE id = ?", arguments: arguments + [try StoredNode.key(for: id)])
            }
        }
    }

    /// Makes every node, query and collection stale from `now` on, keeping them.
    @concurrent public func expire(at now: Date) async throws {
        let at = now.timeIntervalSince1970
        try modify { db in
            for table in ["nodes", "queries", "collections"] {
                try db.execute(
                    sql: "UPDATE \(table) SET expires_at = MIN(COALESCE(expires_at, ?), ?)", arguments: [at, at])
            }
        }
    }

    /// Erases everything and shrinks the file.
    @concurrent public func clear() async throws {
        try modify { db in
            try db.execute(sql: "DELETE FROM nodes; DELETE FROM queries; DELETE FROM collections;")
        }
        try withDatabase { pool in
            try pool.vacuum()
            try pool.writeWithoutTransaction { db in
                _ = try db.checkpoint(.truncate)
            }
        }
    }

    // MARK: Internals

    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try withDatabase { pool in
            try pool.read { db in
                try checkOwnership(db)
                return try body(db)
            }
        }
    }

    func modify<T>(_ body: (Database) throws -> T) throws -> T {
        try withDatabase { pool in
            try pool.write { db in
                try checkOwnership(db)
                return try body(db)
            }
        }
    }

    /// Fails when the file now holds another source's data (another process opened it for
    /// another backend), so none of it is read as this source's and none of this source's is
    /// written into it.
    private func checkOwnership(_ db: Database) throws {
        guard let namespace else { return }
        let held = try Self.heldNamespace(db)
        guard held != namespace else { return }
        let holder = held ?? "no source"
        if !reportedTakeover.exchange(true, ordering: .relaxed) {
            logger.warning(
                "disk-cache: \(path) now holds data from \(holder), not \(namespace); caching on disk is off")
        }
        throw StoreChainError(
            .cacheFile, "the cache file \(path) holds data from \(holder), not from \(namespace)",
            suggestion: "give each backend its own cache path (or 'namespace'); the app keeps working from the backend")
    }

    /// The source whose data the file holds, if one claimed it.
    private static func heldNamespace(_ db: Database) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'namespace'"))
    }

    /// Makes the file hold `namespace`'s data: a file that held another source's data (or data
    /// of no known source) is emptied first.
    func claimFile(_ db: Database) throws {
        guard let namespace else { return }
        let held = try Self.heldNamespace(db)
        guard held != namespace else { return }
        let entries = try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM nodes) + (SELECT COUNT(*) FROM queries)")
        if (entries ?? 0) > 0 {
            logger.notice(
                "disk-cache: \(path) held data from \(held ?? "an unnamed source"); it now caches \(namespace) and starts empty"
            )
        }
        try db.execute(sql: "DELETE FROM nodes; DELETE FROM queries; DELETE FROM collections")
        try db.execute(
            sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('namespace', ?)", arguments: [namespace])
    }

    /// Runs `body` on the open file; a file found corrupt is moved aside and rebuilt for the
    /// next operation.
    private func withDatabase<T>(_ body: (DatabasePool) throws -> T) throws -> T {
        accessProbe.withLock { $0 }?()
        let pool = database.withLock { current in
            if current == nil, lockedAtOpen.load(ordering: .relaxed), let opened = try? open() {
                lockedAtOpen.store(false, ordering: .relaxed)
                current = opened
            }
            return current
        }
        guard let pool else {
            throw StoreChainError(
                .cacheFile, "the cache file \(path) could not be opened",
                suggestion: "check the path and its permissions; the app keeps working from the backend")
        }
        do {
            return try body(pool)
        } catch let error as DatabaseError where Self.isCorruption(error) {
            logger.warning("disk-cache: \(path) is damaged (\(error.message ?? "\(error)")); rebuilding it")
            database.withLock { current in
                if current === pool {
                    try? pool.close()
                    current = rebuild()
                    targetIndexes.withLock { $0 = [] }
                }
            }
            throw StoreChainError(
                .cacheFile, "the cache file \(path) was damaged and has been rebuilt", underlying: error)
        }
    }

    private static func isCorruption(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }
}
