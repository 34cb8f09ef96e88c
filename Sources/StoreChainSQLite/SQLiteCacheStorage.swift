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
public final class SQLiteCacheStorage: CacheStorage {
    /// The schema this code writes; a file with another version is rebuilt.
    public static let schemaVersion = 6

    public let path: String
    /// What the cached data comes from; `nil` takes the file as it is, whatever wrote it.
    public let namespace: String?
    /// The model, for compiling predicates to SQL; `nil` filters nothing in SQL.
    public let model: Model?
    /// Upper bound on stored payload bytes; least recently used entries go first.
    public let maxBytes: Int
    /// Whether payloads are compressed (when that saves space).
    public let compresses: Bool
    private let logger: Logger
    private let database = Locked<DatabasePool?>(nil)
    /// Whether the file was locked by another connection when it was opened: it is opened
    /// again on next use instead of being taken for damage.
    private let lockedAtOpen = Atomic<Bool>(false)
    /// Recently used entries, written to the file with the next write.
    private let touches = Locked<(nodes: Set<String>, queries: Set<String>)>(([], []))
    private let useCounter = Atomic<Int>(0)
    /// Whether another source's takeover of the file has been logged.
    private let reportedTakeover = Atomic<Bool>(false)
    /// Called before each use of the file, where it runs (tests check it is off the caller's
    /// executor).
    let accessProbe = Locked<(@Sendable () -> Void)?>(nil)

    /// Opens (or creates) the cache file at `path` for data from `namespace`.
    public init(
        path: String, namespace: String? = nil, model: Model? = nil, maxBytes: Int = 200 << 20,
        compresses: Bool = true, logger: Logger = Logger(label: "storechain.disk-cache")
    ) {
        self.path = path
        self.namespace = namespace
        self.compresses = compresses
        self.model = model
        self.maxBytes = maxBytes
        self.logger = logger
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
        var condition = ""
        var arguments: StatementArguments = [entity]
        if let predicate, let description = model?.entity(named: entity),
            let compiled = SQLPredicate(predicate, entity: description)
        {
            condition = " AND (\(compiled.sql))"
            arguments += compiled.arguments
        }
        let select = """
            SELECT rowid AS row_id, payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
            FROM nodes WHERE entity = ?
            """
        do {
            return try decodeNodes(of: entity) { db in
                try Row.fetchCursor(db, sql: select + condition + " ORDER BY rowid", arguments: arguments)
            }
        } catch let error as DatabaseError where error.message == SQLPredicate.damagedPayload {
            // The filter met a payload it cannot read: every row of the entity is decoded, so
            // the damaged ones are found and dropped (and this read fails), never left unmatched.
            return try decodeNodes(of: entity) { db in try Row.fetchCursor(db, sql: select, arguments: [entity]) }
        }
    }

    /// Decodes the rows of `entity`'s nodes; when some are damaged (and dropped) the read fails,
    /// since answering without them would leave them silently out of a complete collection.
    private func decodeNodes(of entity: String, _ fetch: (Database) throws -> RowCursor) throws -> [Node] {
        let decoder = RowDecoder()
        let (nodes, dropped) = try decodeRows(in: "nodes", fetch) { row in try Self.node(row, decoder: decoder) }
        guard dropped == 0 else {
            throw StoreChainError(
                .cacheFile, "damaged cached objects of \(entity) were dropped from \(path)",
                suggestion: "nothing to do: they are fetched again")
        }
        return nodes
    }

    /// Decodes the rows `fetch` selects as they are read (no copy of each row is made first); a
    /// row that cannot be decoded (a damaged page that still passes SQLite's checks) is logged,
    /// deleted and treated as not cached, so one bad entry neither crashes the app nor disables
    /// the cache. A dropped node's entity no longer has its whole collection cached.
    private func decodeRows<T>(
        in table: String, _ fetch: (Database) throws -> RowCursor, decode: (Row) throws -> T
    ) throws -> (decoded: [T], dropped: Int) {
        var damaged: [Int64] = []
        let decoded = try read { db in
            var decoded: [T] = []
            let rows = try fetch(db)
            while let row = try rows.next() {
                do {
                    decoded.append(try decode(row))
                } catch {
                    if let rowID = try? row.decode(Int64.self, forColumn: "row_id") { damaged.append(rowID) }
                    logger.warning("disk-cache: a damaged entry in \(table) of \(path) is dropped: \(error)")
                }
            }
            return decoded
        }
        if !damaged.isEmpty {
            let rowIDs = damaged.map(String.init).joined(separator: ",")
            _ = try? modify { db in
                if table == "nodes" {
                    try db.execute(
                        sql:
                            "DELETE FROM collections WHERE entity IN (SELECT entity FROM nodes WHERE rowid IN (\(rowIDs)))"
                    )
                }
                try db.execute(sql: "DELETE FROM \(table) WHERE rowid IN (\(rowIDs))")
            }
        }
        return (decoded, damaged.count)
    }

    /// What the file holds: objects per entity, query windows, complete collections, expired
    /// entries, payload bytes and the file's size on disk.
    public struct Statistics: Sendable, Hashable {
        public var objectsByEntity: [String: Int]
        public var queries: Int
        public var collections: [String]
        public var expired: Int
        public var payloadBytes: Int
        public var fileBytes: Int
    }

    @concurrent public func statistics(now: Date = Date()) async throws -> Statistics {
        try read { db in
            var byEntity: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT entity, COUNT(*) AS n FROM nodes GROUP BY entity") {
                byEntity[try row.decode(String.self, forColumn: "entity")] = try row.decode(Int.self, forColumn: "n")
            }
            let time = now.timeIntervalSince1970
            let expired =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT (SELECT COUNT(*) FROM nodes WHERE expires_at <= ?)
                             + (SELECT COUNT(*) FROM queries WHERE expires_at <= ?)
                        """, arguments: [time, time]) ?? 0
            return Statistics(
                objectsByEntity: byEntity,
                queries: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM queries") ?? 0,
                collections: try String.fetchAll(db, sql: "SELECT entity FROM collections ORDER BY entity"),
                expired: expired, payloadBytes: try Self.payloadBytes(db), fileBytes: fileBytes())
        }
    }

    // MARK: Writing

    @concurrent public func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        let encoder = JSONEncoder()
        // The nodes of one response share their freshness: its columns are encoded once.
        var freshnessColumns: [Freshness: StatementArguments] = [:]
        var nodeRows: [(key: String, entity: String, payload: Payload, freshness: StatementArguments)] = []
        for node in write.nodes where !node.id.isTemporary {
            let freshness = node.freshness ?? Freshness(expiresAt: .distantPast)
            let columns = freshnessColumns[freshness] ?? Self.arguments(freshness)
            freshnessColumns[freshness] = columns
            nodeRows.append(
                (
                    try StoredNode.key(for: node.id), node.id.entity,
                    Payload(try NodePayload.encode(node), compressing: compresses), columns
                ))
        }
        var queryPayload: Payload?
        if let query = write.query {
            queryPayload = Payload(try encoder.encode(try StoredQuery(query)), compressing: compresses)
        }
        return try modify { db in
            let decoder = RowDecoder()
            var removed = Set<ObjectID>()
            for entity in write.invalidated {
                try db.execute(sql: "DELETE FROM queries WHERE instr(reads, ?) > 0", arguments: [" \(entity) "])
            }
            for entity in write.incomplete {
                try db.execute(sql: "DELETE FROM collections WHERE entity = ?", arguments: [entity])
            }
            for id in write.removed {
                let key = try StoredNode.key(for: id)
                try db.cachedStatement(sql: "DELETE FROM nodes WHERE id = ?").execute(arguments: [key])
                if db.changesCount > 0 { removed.insert(id) }
            }
            // One compiled statement for every node (compiling it per node cost more than the insert).
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO nodes (id, entity, payload, compressed, raw_size, size, fetched_at, expires_at,
                                       etag, last_modified, page_validators, rules, last_used)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET payload = excluded.payload, compressed = excluded.compressed,
                        raw_size = excluded.raw_size, size = excluded.size, fetched_at = excluded.fetched_at,
                        expires_at = excluded.expires_at, etag = excluded.etag,
                        last_modified = excluded.last_modified, page_validators = excluded.page_validators,
                        rules = excluded.rules, last_used = excluded.last_used
                    """)
            for row in nodeRows {
                try insert.execute(
                    arguments: [row.key, row.entity] + row.payload.arguments + row.freshness + [nextUse()])
            }
            for (entity, freshness) in write.collections {
                let kept = Set(nodeRows.filter { $0.entity == entity }.map(\.key))
                for key in try String.fetchAll(db, sql: "SELECT id FROM nodes WHERE entity = ?", arguments: [entity])
                where !kept.contains(key) {
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
            if let query = write.query, let queryPayload {
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

    /// A payload as stored (a node's binary layout, a query's JSON), compressed with zlib when
    /// that is smaller.
    private struct Payload {
        let bytes: Data
        let compressed: Bool
        let rawSize: Int

        init(_ json: Data, compressing: Bool) {
            rawSize = json.count
            if compressing, let smaller = Zlib.compressIfSmaller(json) {
                bytes = smaller
                compressed = true
            } else {
                bytes = json
                compressed = false
            }
        }

        var arguments: StatementArguments { [bytes, compressed, rawSize, bytes.count] }
    }

    // Rows are decoded with `decode`, which throws, never with subscripts, which trap on a
    // value of the wrong type: a damaged file can hold anything.
    private static func payload(_ row: Row, decoder: RowDecoder) throws -> Data {
        let columns = decoder.columns(of: row)
        let bytes = try row.decode(Data.self, at: columns.payload, column: "payload")
        guard try row.decode(Bool.self, at: columns.compressed, column: "compressed") else { return bytes }
        return try Zlib.decompress(bytes, originalSize: try row.decode(at: columns.rawSize, column: "raw_size"))
    }

    private static func node(_ row: Row, decoder: RowDecoder) throws -> Node {
        var node = try NodePayload.decode(
            try payload(row, decoder: decoder), freshness: try freshness(row, decoder: decoder),
            sharingNames: &decoder.attributeNames)
        // The rows of one response share their freshness: one box for all of them.
        if let last = decoder.freshness, last == node.sharedFreshness {
            node.sharedFreshness = last
        } else {
            decoder.freshness = node.sharedFreshness
        }
        return node
    }

    /// What the rows of one read share: their columns' positions, the `rules` and
    /// `page_validators` columns (the rows of one response share their text, so each distinct
    /// text is decoded once per read), and the attribute names and freshness of the node decoded
    /// last, for the next one to share.
    private final class RowDecoder {
        private var decodedRules: [String: ResponseFreshness] = [:]
        private var decodedValidators: [String: [PageValidator]] = [:]
        private var positions: ColumnPositions?
        var attributeNames: [String] = []
        var freshness: OutOfLine<Freshness>?

        /// Where the payload and freshness columns are: the same in every row of one statement.
        func columns(of row: Row) -> ColumnPositions {
            if let positions { return positions }
            let found = ColumnPositions(Array(row.columnNames))
            positions = found
            return found
        }

        func rules(_ text: String) throws -> ResponseFreshness {
            try Self.decode(text, known: &decodedRules)
        }

        func pageValidators(_ text: String) throws -> [PageValidator] {
            try Self.decode(text, known: &decodedValidators)
        }

        private static func decode<Decoded: Decodable>(_ text: String, known: inout [String: Decoded]) throws
            -> Decoded
        {
            if let decoded = known[text] { return decoded }
            let decoded = try JSONDecoder().decode(Decoded.self, from: Data(text.utf8))
            known[text] = decoded
            return decoded
        }
    }

    /// The positions of the payload and freshness columns in a statement's rows, found by name
    /// once per read: GRDB's lookup by name lowercases the name on every call, which took a
    /// seventh of the time of reading 100,000 cached objects.
    private struct ColumnPositions {
        let payload: Int?, compressed: Int?, rawSize: Int?
        let fetchedAt: Int?, expiresAt: Int?, etag: Int?, lastModified: Int?, pageValidators: Int?, rules: Int?

        init(_ names: [String]) {
            payload = names.firstIndex(of: "payload")
            compressed = names.firstIndex(of: "compressed")
            rawSize = names.firstIndex(of: "raw_size")
            fetchedAt = names.firstIndex(of: "fetched_at")
            expiresAt = names.firstIndex(of: "expires_at")
            etag = names.firstIndex(of: "etag")
            lastModified = names.firstIndex(of: "last_modified")
            pageValidators = names.firstIndex(of: "page_validators")
            rules = names.firstIndex(of: "rules")
        }
    }

    private static func freshness(_ row: Row, decoder: RowDecoder) throws -> Freshness {
        let columns = decoder.columns(of: row)
        return Freshness(
            fetchedAt: try row.decodeIfPresent(Double.self, at: columns.fetchedAt, column: "fetched_at").map(
                Date.init(timeIntervalSince1970:)),
            expiresAt: try row.decodeIfPresent(Double.self, at: columns.expiresAt, column: "expires_at").map(
                Date.init(timeIntervalSince1970:)),
            etag: try row.decodeIfPresent(at: columns.etag, column: "etag"),
            lastModified: try row.decodeIfPresent(at: columns.lastModified, column: "last_modified"),
            pageValidators: try row.decodeIfPresent(String.self, at: columns.pageValidators, column: "page_validators")
                .map(decoder.pageValidators) ?? [],
            rules: try row.decodeIfPresent(String.self, at: columns.rules, column: "rules").map(decoder.rules))
    }

    private static func arguments(_ freshness: Freshness) -> StatementArguments {
        // Encoding plain strings, numbers, durations and optionals cannot fail; an empty list is
        // stored as NULL.
        let pageValidators =
            freshness.pageValidators.isEmpty
            ? nil : (try? JSONEncoder().encode(freshness.pageValidators)).map { String(decoding: $0, as: UTF8.self) }
        let rules = freshness.rules.flatMap { try? JSONEncoder().encode($0) }.map {
            String(decoding: $0, as: UTF8.self)
        }
        return [
            freshness.fetchedAt?.timeIntervalSince1970, freshness.expiresAt?.timeIntervalSince1970, freshness.etag,
            freshness.lastModified, pageValidators, rules,
        ]
    }

    private static func payloadBytes(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT (SELECT IFNULL(SUM(size), 0) FROM nodes) + (SELECT IFNULL(SUM(size), 0) FROM queries)")
            ?? 0
    }

    private func nextUse() -> Int {
        useCounter.add(1, ordering: .relaxed).newValue
    }

    private func fileBytes() -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Records recent use, then evicts least recently used entries until the payloads fit.
    /// Evicting a node of a complete collection makes the collection incomplete.
    private func evict(_ db: Database) throws {
        let touched = touches.withLock { touches in
            defer { touches = ([], []) }
            return touches
        }
        let touchNode = try db.cachedStatement(sql: "UPDATE nodes SET last_used = ? WHERE id = ?")
        for key in touched.nodes { try touchNode.execute(arguments: [nextUse(), key]) }
        let touchQuery = try db.cachedStatement(sql: "UPDATE queries SET last_used = ? WHERE key = ?")
        for key in touched.queries { try touchQuery.execute(arguments: [nextUse(), key]) }
        var excess = try Self.payloadBytes(db) - maxBytes
        while excess > 0 {
            let victims = try Row.fetchAll(
                db,
                sql: """
                    SELECT 'node' AS kind, id AS key, entity, size, last_used FROM nodes
                    UNION ALL SELECT 'query', key, entity, size, last_used FROM queries
                    ORDER BY last_used LIMIT 64
                    """)
            if victims.isEmpty { return }
            for victim in victims where excess > 0 {
                let key: String = victim["key"]
                if victim["kind"] == "node" {
                    try db.execute(sql: "DELETE FROM nodes WHERE id = ?", arguments: [key])
                    try db.execute(sql: "DELETE FROM collections WHERE entity = ?", arguments: [victim["entity"]])
                } else {
                    try db.execute(sql: "DELETE FROM queries WHERE key = ?", arguments: [key])
                }
                excess -= victim["size"] as Int
            }
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
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
    private func claim(_ db: Database) throws {
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
                }
            }
            throw StoreChainError(
                .cacheFile, "the cache file \(path) was damaged and has been rebuilt", underlying: error)
        }
    }

    private static func isCorruption(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }

    // MARK: Opening

    private func openOrRebuild() -> DatabasePool? {
        do {
            return try open()
        } catch {
            if let error = error as? DatabaseError,
                error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
            {
                // Another process is setting the file up or writing it: not damage either.
                logger.warning("disk-cache: \(path) is locked by another connection; using it once it is free")
                lockedAtOpen.store(true, ordering: .relaxed)
                return nil
            }
            if let reason = unwritableReason() {
                // Not damage: moving the file aside would take someone's cache away from them.
                logger.warning("disk-cache: cannot write \(path) (\(reason)); caching on disk is off")
                return nil
            }
            logger.warning("disk-cache: cannot use \(path) (\(error)); moving it aside and starting afresh")
            return rebuild()
        }
    }

    /// Why this process may not write the file or its folder, if that is so.
    private func unwritableReason() -> String? {
        let manager = FileManager.default
        let directory = (path as NSString).deletingLastPathComponent
        if manager.fileExists(atPath: path), !manager.isWritableFile(atPath: path) {
            return "the file is read-only"
        }
        if !directory.isEmpty, manager.fileExists(atPath: directory), !manager.isWritableFile(atPath: directory) {
            return "its folder \(directory) is read-only"
        }
        return nil
    }

    private func rebuild() -> DatabasePool? {
        moveAside()
        do {
            return try open()
        } catch {
            logger.warning("disk-cache: cannot create \(path) (\(error)); caching on disk is off")
            return nil
        }
    }

    private func moveAside() {
        let manager = FileManager.default
        let stamp = Int(Date().timeIntervalSince1970)
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            let aside = "\(path).corrupt-\(stamp)"
            try? manager.removeItem(atPath: aside)
            if (try? manager.moveItem(atPath: path, toPath: aside)) != nil {
                logger.warning("disk-cache: the damaged file is kept at \(aside)")
            }
        }
        for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: path + suffix) }
    }

    private func open() throws -> DatabasePool {
        let manager = FileManager.default
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw StoreChainError(.cacheFile, "cannot create \(path)")
            }
        }
        var configuration = Configuration()
        configuration.label = "storechain.disk-cache"
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try AttributeFunction.install(in: db) }
        let pool = try DatabasePool(path: path, configuration: configuration)
        do {
            try pool.write { db in
                try migrate(db)
                try claim(db)
            }
            try pool.read { db in try Self.verifySchema(db) }
            // Reading every table's first page finds a file damaged past its header.
            try pool.read { db in _ = try Int.fetchOne(db, sql: "PRAGMA quick_check(1)") }
            let status = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") }
            guard status == "ok" else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: status ?? "quick_check failed")
            }
            useCounter.store(
                try pool.read { db in
                    try Int.fetchOne(
                        db,
                        sql:
                            "SELECT MAX(IFNULL((SELECT MAX(last_used) FROM nodes), 0), IFNULL((SELECT MAX(last_used) FROM queries), 0))"
                    ) ?? 0
                }, ordering: .relaxed)
            return pool
        } catch {
            try? pool.close()
            throw error
        }
    }

    /// Creates the tables, or rebuilds them when the file was written by another schema version.
    private func migrate(_ db: Database) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version == Self.schemaVersion { return }
        if version != 0 {
            logger.warning(
                "disk-cache: \(path) has schema version \(version), not \(Self.schemaVersion); rebuilding it")
        }
        try db.execute(
            sql: """
                DROP TABLE IF EXISTS nodes; DROP TABLE IF EXISTS queries; DROP TABLE IF EXISTS collections;
                DROP TABLE IF EXISTS meta
                """)
        for statement in Self.schema { try db.execute(sql: statement) }
        try db.execute(sql: "PRAGMA user_version = \(Self.schemaVersion)")
    }

    /// `CachedQuery.reads` as stored: the entity names (identifiers), each between spaces, so
    /// `instr(reads, ' Band ')` finds the queries that read `Band`.
    private static func readsColumn(_ reads: Set<String>) -> String {
        " " + reads.sorted().joined(separator: " ") + " "
    }

    /// Every table and index of this schema version, exactly as SQLite keeps their definitions.
    private static let schema = [
        """
        CREATE TABLE nodes (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL, payload BLOB NOT NULL, \
        compressed INTEGER NOT NULL, raw_size INTEGER NOT NULL, size INTEGER NOT NULL, fetched_at REAL, \
        expires_at REAL, etag TEXT, last_modified TEXT, page_validators TEXT, rules TEXT, last_used INTEGER NOT NULL)
        """,
        "CREATE INDEX nodes_by_entity ON nodes (entity)",
        "CREATE INDEX nodes_by_use ON nodes (last_used)",
        """
        CREATE TABLE queries (key TEXT PRIMARY KEY NOT NULL, shape TEXT NOT NULL, entity TEXT NOT NULL, \
        reads TEXT NOT NULL, payload BLOB NOT NULL, compressed INTEGER NOT NULL, raw_size INTEGER NOT NULL, size INTEGER NOT NULL, \
        fetched_at REAL, expires_at REAL, etag TEXT, last_modified TEXT, page_validators TEXT, rules TEXT, last_used INTEGER NOT NULL)
        """,
        "CREATE INDEX queries_by_shape ON queries (shape)",
        "CREATE INDEX queries_by_use ON queries (last_used)",
        """
        CREATE TABLE collections (entity TEXT PRIMARY KEY NOT NULL, fetched_at REAL, expires_at REAL, etag TEXT, \
        last_modified TEXT, page_validators TEXT, rules TEXT)
        """,
        "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    ]

    /// Checks that the tables are the ones this version writes: a damaged definition (a column
    /// renamed by a flipped byte) passes SQLite's checks but would make every read fail.
    private static func verifySchema(_ db: Database) throws {
        let stored = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")
        guard Set(stored) == Set(schema) else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "its tables are not the ones this version writes")
        }
    }
}

extension SQLiteCacheStorage {
    /// Marks the file as written by another schema version (for tests of the rebuild).
    func setSchemaVersionForTesting(_ version: Int) throws {
        try modify { db in try db.execute(sql: "PRAGMA user_version = \(version)") }
    }

    /// Lets the file grow by at most `pages` more pages, after which writes fail as on a full disk.
    func simulateFullDiskForTesting(afterPages pages: Int) throws {
        try modify { db in
            let count = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(count + pages)")
        }
    }
}

extension Row {
    /// The value at `position`: a column the statement selected, found once by `ColumnPositions`.
    fileprivate func decode<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type = Value.self, at position: Int?, column: String
    ) throws -> Value {
        try decode(type, atIndex: try Self.require(position, column))
    }

    /// The value at `position`, or `nil` for NULL. (Decoding an optional type went through
    /// GRDB's generic path, which looked up type metadata for every row.)
    fileprivate func decodeIfPresent<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type = Value.self, at position: Int?, column: String
    ) throws -> Value? {
        let position = try Self.require(position, column)
        return hasNull(atIndex: position) ? nil : try decode(type, atIndex: position)
    }

    private static func require(_ position: Int?, _ column: String) throws -> Int {
        guard let position else { throw StoreChainSQLiteError("a cache read did not select the column '\(column)'") }
        return position
    }
}
