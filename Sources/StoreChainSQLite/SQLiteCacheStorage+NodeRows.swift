import Foundation
import GRDB
import GRDBSQLite
import StoreChain

/// Node rows as the storage writes them, bound to the insert with SQLite's C interface: binding
/// through GRDB (an array of existential values built per row, each converted again when bound)
/// was most of the cost of writing a 10k collection.
extension SQLiteCacheStorage {
    /// One node's row: its key, entity, payload and the freshness columns it shares with the
    /// other nodes of its response.
    struct NodeRow {
        let key: String
        let entity: String
        let payload: Payload
        let freshness: FreshnessColumns
    }

    /// The six freshness columns, in table order.
    struct FreshnessColumns {
        let fetchedAt: Double?
        let expiresAt: Double?
        let etag: String?
        let lastModified: String?
        let pageValidators: String?
        let rules: String?

        init(_ freshness: Freshness) {
            // Encoding plain strings, numbers, durations and optionals cannot fail; an empty list
            // is stored as NULL.
            let validators = freshness.validators
            fetchedAt = freshness.fetchedAt?.timeIntervalSince1970
            expiresAt = freshness.expiresAt?.timeIntervalSince1970
            etag = validators.etag
            lastModified = validators.lastModified
            pageValidators =
                validators.pages.isEmpty
                ? nil : (try? JSONEncoder().encode(validators.pages)).map { String(decoding: $0, as: UTF8.self) }
            rules = freshness.rules.flatMap { try? JSONEncoder().encode($0) }.map {
                String(decoding: $0, as: UTF8.self)
            }
        }

        var arguments: StatementArguments { [fetchedAt, expiresAt, etag, lastModified, pageValidators, rules] }
    }

    private static let insertNode = """
        INSERT INTO nodes (id, entity, payload, compressed, raw_size, size, fetched_at, expires_at,
                           etag, last_modified, page_validators, rules, last_used)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET payload = excluded.payload, compressed = excluded.compressed,
            raw_size = excluded.raw_size, size = excluded.size, fetched_at = excluded.fetched_at,
            expires_at = excluded.expires_at, etag = excluded.etag,
            last_modified = excluded.last_modified, page_validators = excluded.page_validators,
            rules = excluded.rules, last_used = excluded.last_used
        """

    /// Inserts or replaces `rows`, with one compiled statement (compiling it per node cost more
    /// than the insert). A failure throws the `DatabaseError` GRDB would, so a full disk or a
    /// damaged file is handled as for any other statement.
    func insert(_ rows: [NodeRow], in db: Database) throws {
        // The statement is this function's alone: it is only ever bound and stepped here.
        let handle = try db.cachedStatement(sql: Self.insertNode).sqliteStatement
        for row in rows {
            sqlite3_reset(handle)
            var binder = Binder(handle: handle)
            binder.bind(row.key, at: 1)
            binder.bind(row.entity, at: 2)
            binder.bind(row.payload.bytes, at: 3)
            binder.bind(Int64(row.payload.compressed ? 1 : 0), at: 4)
            binder.bind(Int64(row.payload.rawSize), at: 5)
            binder.bind(Int64(row.payload.bytes.count), at: 6)
            binder.bind(row.freshness.fetchedAt, at: 7)
            binder.bind(row.freshness.expiresAt, at: 8)
            binder.bind(row.freshness.etag, at: 9)
            binder.bind(row.freshness.lastModified, at: 10)
            binder.bind(row.freshness.pageValidators, at: 11)
            binder.bind(row.freshness.rules, at: 12)
            binder.bind(Int64(nextUse()), at: 13)
            // A value SQLite refused to bind (too large) fails the write, never stored as NULL.
            let code = binder.failure == SQLITE_OK ? sqlite3_step(handle) : binder.failure
            guard code == SQLITE_DONE else {
                let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
                sqlite3_reset(handle)
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: Self.insertNode)
            }
        }
        sqlite3_reset(handle)
    }

    /// Binds values to a statement, each copied by SQLite before the call returns, and keeps the
    /// first result code that is not `SQLITE_OK`.
    private struct Binder {
        let handle: OpaquePointer
        private(set) var failure = SQLITE_OK

        private mutating func record(_ code: Int32) {
            if failure == SQLITE_OK { failure = code }
        }

        mutating func bind(_ text: String?, at index: Int32) {
            guard var text else {
                record(sqlite3_bind_null(handle, index))
                return
            }
            let handle = handle
            record(
                text.withUTF8 { utf8 -> Int32 in
                    guard let base = utf8.baseAddress else {
                        // An empty string is bound as empty text, never as NULL.
                        return sqlite3_bind_text64(
                            handle, index, "", 0, AttributeFunction.transient, UInt8(SQLITE_UTF8))
                    }
                    return sqlite3_bind_text64(
                        handle, index, base, UInt64(utf8.count), AttributeFunction.transient, UInt8(SQLITE_UTF8))
                })
        }

        mutating func bind(_ data: Data, at index: Int32) {
            let handle = handle
            record(
                data.withUnsafeBytes { bytes -> Int32 in
                    // An empty blob binds as a zero-length blob, never as NULL (a payload column
                    // is NOT NULL).
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_zeroblob(handle, index, 0)
                    }
                    return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), AttributeFunction.transient)
                })
        }

        mutating func bind(_ number: Double?, at index: Int32) {
            record(number.map { sqlite3_bind_double(handle, index, $0) } ?? sqlite3_bind_null(handle, index))
        }

        mutating func bind(_ number: Int64, at index: Int32) {
            record(sqlite3_bind_int64(handle, index, number))
        }
    }
}
