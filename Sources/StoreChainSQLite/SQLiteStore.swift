import Foundation
import GRDB
import StoreChain

/// A local store persisted in one SQLite file: a chain's terminal when the app owns its data
/// rather than mirroring a backend (drafts, offline-first data, tests of a whole chain).
///
/// Fetches and faults are answered by the reference evaluator over the objects, which are held
/// in memory as well, so it suits data that fits in memory. A save is applied all or nothing
/// and returns only once it is committed to the file (WAL, `synchronous = FULL`): a process
/// killed at any moment leaves the file with every save that returned and none half-written.
///
/// Unlike the disk cache, a damaged file is never moved aside or rebuilt — it holds the only
/// copy of its data — so opening it fails with a `store-file` error that says what to do.
///
/// ```swift
/// let store = try SQLiteStore(path: "Data/music.sqlite", model: model)
/// let chain = Chain(terminal: store) { MemoryCache(model: model) }
/// ```
public final class SQLiteStore: StoreResponder, OfflineAnswering {
    /// The schema this code writes and reads.
    public static let schemaVersion = 1
    /// Who answered, in `ResponseInfo`.
    public let name = "sqlite"
    /// The SQLite file's path.
    public let path: String
    /// The model of the objects it stores.
    public let model: ObjectModel
    /// The store file: a cache over it keeps its data apart from other stores'.
    public var cacheNamespace: String? { "sqlite \(path)" }
    private let memory: InMemoryStore
    private let database: DatabaseQueue

    /// Opens the store file at `path`, creating it (owner-only, with its directory) when it
    /// does not exist; a new, empty store is filled with `seed`'s records.
    ///
    /// - Throws: `store-file` when the file cannot be created or read, is damaged, or was
    ///   written by another schema version; `invalid-data` when a stored object no longer fits
    ///   the model.
    /// `busyTimeout` is how long a save waits while another process holds the file.
    public init(
        path: String, model: ObjectModel, seed: [Node]? = nil, busyTimeout: Duration = .seconds(5)
    ) throws(StoreChainError) {
        self.path = path
        self.model = model
        do {
            database = try Self.open(path, busyTimeout: busyTimeout)
            // Added after schema version 1 was written: files from before get it here.
            try database.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE IF NOT EXISTS removed_keys (entity TEXT PRIMARY KEY NOT NULL, highest INTEGER NOT NULL)"
                )
            }
            let stored = try Self.load(database, path: path)
            memory = InMemoryStore(model: model, dataset: stored)
            if let nodes = seed, stored.count == 0 {
                try Self.write(nodes, deleting: [], to: database)
                memory.upsert(nodes)
            }
        } catch let error as StoreChainError {
            throw error
        } catch {
            throw Self.fileError("cannot open the store file", path: path, underlying: error)
        }
    }

    /// How many objects the store holds.
    public var count: Int { memory.snapshot.count }

    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        if case .save(let changes) = request {
            try Task.checkCancellation()
            return StoreResponse(
                .saved(try await commit(changes)), info: ResponseInfo(answeredBy: name, origin: .localStore))
        }
        var response = try await memory.respond(to: request, context: context)
        response.info.answeredBy = name
        return response
    }

    /// Writes a save off the caller's executor: an app saves from the main actor.
    @concurrent private func commit(_ changes: SaveChanges) async throws(StoreChainError) -> SaveResult {
        try save(changes)
    }

    /// The object with this ID, if the store holds it.
    public func node(for id: ObjectID) -> Node? {
        memory.node(for: id)
    }

    /// Runs a fetch request over the stored objects.
    public func fetch(_ request: StoreChain.FetchRequest) throws(StoreChainError) -> FetchResult {
        try memory.fetch(request)
    }

    /// Applies a save to the file and the objects, all or nothing; returns once it is
    /// committed.
    public func save(_ changes: SaveChanges) throws(StoreChainError) -> SaveResult {
        try memory.save(changes) { result throws(StoreChainError) in
            do {
                try Self.write(result.nodes, deleting: result.deleted, to: database)
            } catch {
                throw Self.fileError("the save could not be written to the store file", path: path, underlying: error)
            }
        }
    }

    /// Inserts or replaces objects as they are (no model checks, no inverse upkeep): for
    /// importing data.
    public func upsert(_ nodes: [Node]) throws(StoreChainError) {
        do {
            try Self.write(nodes, deleting: [], to: database)
        } catch {
            throw Self.fileError("the objects could not be written to the store file", path: path, underlying: error)
        }
        memory.upsert(nodes)
    }

    // MARK: The file

    private static func open(_ path: String, busyTimeout: Duration) throws(StoreChainError) -> DatabaseQueue {
        try DurableFile.open(
            path, kind: "store", busyTimeout: busyTimeout, schemaVersion: schemaVersion,
            schema: """
                CREATE TABLE objects (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL, payload BLOB NOT NULL);
                CREATE INDEX objects_by_entity ON objects (entity);
                """)
    }

    private static func load(_ database: DatabaseQueue, path: String) throws -> Dataset {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, payload FROM objects ORDER BY rowid")
        }
        var dataset = Dataset()
        let removed = try database.read { db in try Row.fetchAll(db, sql: "SELECT entity, highest FROM removed_keys") }
        for row in removed {
            dataset.noteRemoved(
                try row.decode(Int.self, forColumn: "highest"), of: try row.decode(String.self, forColumn: "entity"))
        }
        for row in rows {
            // `decode`, never subscripts: a subscript traps on a value of the wrong type.
            do {
                let payload = try row.decode(Data.self, forColumn: "payload")
                dataset.upsert(try JSONDecoder().decode(StoredNode.self, from: payload).node(freshness: Freshness()))
            } catch {
                let id = (try? row.decode(String.self, forColumn: "id")) ?? "?"
                throw fileError(
                    "object \(id) in the store file cannot be read", path: path, underlying: error,
                    suggestion: "restore the file from a backup")
            }
        }
        return dataset
    }

    private static func write(_ nodes: [Node], deleting deleted: [ObjectID], to database: DatabaseQueue) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var rows: [(key: String, entity: String, payload: Data)] = []
        for node in nodes {
            rows.append((try StoredNode.key(for: node.id), node.id.entity, try encoder.encode(StoredNode(node))))
        }
        let deletedKeys = try deleted.map { try StoredNode.key(for: $0) }
        try database.write { db in
            for row in rows {
                try db.execute(
                    // An update keeps its row (and so its place in unsorted fetches after a restart).
                    sql: """
                        INSERT INTO objects (id, entity, payload) VALUES (?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET payload = excluded.payload
                        """,
                    arguments: [row.key, row.entity, row.payload])
            }
            for key in deletedKeys {
                try db.execute(sql: "DELETE FROM objects WHERE id = ?", arguments: [key])
            }
            // The highest integer key deleted, by entity: a new object never gets one again.
            for id in deleted {
                guard case .integer(let key)? = id.key else { continue }
                try db.execute(
                    sql: """
                        INSERT INTO removed_keys (entity, highest) VALUES (?, ?)
                        ON CONFLICT (entity) DO UPDATE SET highest = max(highest, excluded.highest)
                        """,
                    arguments: [id.entity, key])
            }
        }
    }

    private static func fileError(
        _ message: String, path: String, underlying: (any Error)?,
        suggestion: String = "check the path and its permissions"
    ) -> StoreChainError {
        DurableFile.error(message, path: path, kind: "store", underlying: underlying, suggestion: suggestion)
    }
}
