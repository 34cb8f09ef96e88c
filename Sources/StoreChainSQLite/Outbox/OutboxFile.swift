import Foundation
import GRDB
import StoreChain

/// The outbox's SQLite file: one row per save, in the order the saves were made. Every write
/// is committed (WAL, `synchronous = FULL`) before it returns, so a save the outbox acknowledged
/// survives a crash; the file is never rebuilt, since it holds the only copy of those saves.
final class OutboxFile: Sendable {
    static let schemaVersion = 1
    /// Marks an outbox file (`PRAGMA application_id`): "SCOB".
    static let applicationID: Int32 = 0x5343_4F42
    let path: String
    private let database: DatabaseQueue
    private static let columns = "id, changes, state, attempts, last_error, created"

    init(path: String) throws(StoreChainError) {
        self.path = path
        database = try DurableFile.open(
            path, kind: "outbox", applicationID: Self.applicationID, busyTimeout: .seconds(5),
            schemaVersion: Self.schemaVersion,
            schema: """
                CREATE TABLE entries (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, changes BLOB NOT NULL, state TEXT NOT NULL,
                    attempts INTEGER NOT NULL, last_error TEXT, created REAL NOT NULL);
                CREATE INDEX entries_by_state ON entries (state);
                """)
    }

    /// Records a save at the end of the outbox.
    func append(_ changes: SaveChanges, created: Date) throws(StoreChainError) -> OutboxEntry {
        let payload = try encode(changes)
        let id = try run("record a save in") { db in
            try db.execute(
                sql: "INSERT INTO entries (changes, state, attempts, created) VALUES (?, ?, 0, ?)",
                arguments: [payload, OutboxEntry.State.pending.rawValue, created.timeIntervalSince1970])
            return db.lastInsertedRowID
        }
        return OutboxEntry(id: id, changes: changes, state: .pending, attempts: 0, lastError: nil, created: created)
    }

    /// Every entry before `limit` (in `state` when given), oldest first.
    func entries(before limit: Int64 = .max, state: OutboxEntry.State? = nil) throws(StoreChainError)
        -> [OutboxEntry]
    {
        let rows = try run("read") { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM entries WHERE id < ?1 AND (?2 IS NULL OR state = ?2) ORDER BY id",
                arguments: [limit, state?.rawValue])
        }
        var entries: [OutboxEntry] = []
        for row in rows { entries.append(try entry(row)) }
        return entries
    }

    /// The entry with this ID, if it is still in the outbox.
    func entry(_ id: Int64) throws(StoreChainError) -> OutboxEntry? {
        let row = try run("read") { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.columns) FROM entries WHERE id = ?",
                arguments: [id])
        }
        return try row.map { row throws(StoreChainError) in try entry(row) }
    }

    /// How many entries wait to be sent.
    func pendingCount() throws(StoreChainError) -> Int {
        try run("read") { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM entries WHERE state = ?",
                arguments: [OutboxEntry.State.pending.rawValue]) ?? 0
        }
    }

    /// Writes an entry's state, attempts, last error and save.
    func update(_ entry: OutboxEntry) throws(StoreChainError) {
        let payload = try encode(entry.changes)
        try run("update") { db in
            try db.execute(
                sql: "UPDATE entries SET changes = ?, state = ?, attempts = ?, last_error = ? WHERE id = ?",
                arguments: [payload, entry.state.rawValue, entry.attempts, entry.lastError, entry.id])
        }
    }

    /// Removes entries that reached the backend (or that the app discarded) and, in the same
    /// transaction, gives the objects they inserted their permanent IDs in every entry after them,
    /// and rebases the later updates of objects they updated onto the versions they made.
    func remove(
        _ ids: [Int64], remapping permanentIDs: [ObjectID: ObjectID] = [:],
        rebasing versions: [ObjectID: VersionChange] = [:]
    ) throws(StoreChainError) {
        let last = ids.max() ?? 0
        let mentioned = Set(permanentIDs.keys).union(versions.keys)
        // One transaction: the later entries are read and rewritten with nothing in between.
        try run("update") { db in
            for id in ids { try db.execute(sql: "DELETE FROM entries WHERE id = ?", arguments: [id]) }
            guard !mentioned.isEmpty else { return }
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM entries WHERE id > ? ORDER BY id", arguments: [last])
            for row in rows {
                let entry = try entry(row)
                guard entry.mentions(mentioned) else { continue }
                let changes = entry.changes.remapping(permanentIDs).rebasing(versions)
                guard changes != entry.changes else { continue }
                try db.execute(
                    sql: "UPDATE entries SET changes = ? WHERE id = ?", arguments: [try encode(changes), entry.id])
            }
        }
    }

    /// `PRAGMA integrity_check`'s answer: `ok` for a sound file.
    func integrityCheck() throws(StoreChainError) -> String {
        try run("check") { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "no answer" }
    }

    // MARK: Rows

    private func entry(_ row: Row) throws(StoreChainError) -> OutboxEntry {
        // `decode`, never subscripts: a subscript traps on a value of the wrong type.
        let id = (try? row.decode(Int64.self, forColumn: "id")) ?? -1
        do {
            let stateText = try row.decode(String.self, forColumn: "state")
            guard let state = OutboxEntry.State(rawValue: stateText) else {
                throw DurableFile.error(
                    "outbox entry \(id) has the unknown state '\(stateText)'", path: path, kind: "outbox",
                    underlying: nil,
                    suggestion: "open the file with the StoreChain version that wrote it")
            }
            return OutboxEntry(
                id: id,
                changes: try JSONDecoder().decode(SaveChanges.self, from: row.decode(Data.self, forColumn: "changes")),
                state: state, attempts: try row.decode(Int.self, forColumn: "attempts"),
                lastError: try row.decode(String?.self, forColumn: "last_error"),
                created: Date(timeIntervalSince1970: try row.decode(Double.self, forColumn: "created")))
        } catch let error as StoreChainError {
            throw error
        } catch {
            throw DurableFile.error(
                "outbox entry \(id) cannot be read", path: path, kind: "outbox", underlying: error,
                suggestion:
                    "restore the file from a backup, or discard the entry with 'storechain outbox discard \(id)'")
        }
    }

    private func encode(_ changes: SaveChanges) throws(StoreChainError) -> Data {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return try encoder.encode(changes)
        } catch {
            throw StoreChainError(
                .invalidRequest, "the save cannot be recorded in the outbox: \(error)",
                suggestion: "save values the model's attribute types allow")
        }
    }

    private func run<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreChainError) -> T {
        do {
            return try database.write(body)
        } catch let error as StoreChainError {
            throw error
        } catch {
            throw DurableFile.error("cannot \(what) the outbox file", path: path, kind: "outbox", underlying: error)
        }
    }
}
