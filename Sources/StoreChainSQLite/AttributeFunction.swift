import Foundation
import GRDB
import GRDBSQLite
import StoreChain

/// `storechain_attribute(payload, compressed, raw_size, name)`: the stored value of one
/// attribute of a node payload, as SQLite compares it (strings as TEXT, integers and booleans as
/// INTEGER, doubles and dates as REAL; other kinds as NULL, never compiled so never compared).
/// A payload it cannot read fails the statement with `SQLPredicate.damagedPayload`, and the
/// storage drops the damaged rows (`SQLiteCacheStorage.nodes(of:matching:)`) instead of letting
/// SQL leave them silently unmatched.
///
/// It runs once per row a compiled predicate scans, so it is registered with SQLite's C
/// interface: it reads the payload and the name where SQLite holds them, where GRDB's
/// `DatabaseFunction` would copy both into a `Data` and a `String` on every row first.
///
/// `storechain_target(payload, compressed, raw_size, name)` is its twin for a to-one
/// relationship: the key of the object it leads to, so `Track where album.id == 5` is filtered
/// in SQL without decoding the tracks of other albums. An index may hold it
/// (`SQLiteCacheStorage.makeTargetIndexes`), and SQLite computes an index's expression on every
/// write and delete of a row, so it never fails: a payload it cannot read gives
/// `damagedTargetSQL`, which the storage looks for beside every target filter
/// (`NodeSelection`), so a damaged row is found and dropped, never left
/// silently unmatched, and deleting it still works.
enum AttributeFunction {
    static let name = "storechain_attribute"
    static let targetName = "storechain_target"

    /// The target function over a node row for `relationship`, its name written as a literal:
    /// an index over it (`SQLiteCacheStorage.targetIndexSQL`) serves a filter that writes it the
    /// same way.
    static func targetExpression(_ relationship: String) -> String {
        "\(targetName)(payload, compressed, raw_size, \(literal(relationship)))"
    }

    /// What the target function gives for a payload it cannot read: a blob, which no key is.
    static let damagedTargetSQL = "x'dead'"
    private static let damagedTarget: [UInt8] = [0xDE, 0xAD]

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// Registers both functions on a connection.
    static func install(in db: Database) throws {
        // The target function is told apart by a non-null user-data pointer, never dereferenced.
        for (function, userData) in [(name, nil), (targetName, UnsafeMutableRawPointer(bitPattern: 1))] {
            let code = sqlite3_create_function_v2(
                db.sqliteConnection, function, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, userData, call, nil, nil, nil)
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot register \(function)")
            }
        }
    }

    /// SQLite's entry point: sets the result, or fails the statement on a damaged row.
    private static let call: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context else { return }
        let target = sqlite3_user_data(context) != nil
        guard count == 4, let arguments, let value = value(of: arguments, target: target) else {
            if target {
                // Two bytes, so the length fits an Int32.
                damagedTarget.withUnsafeBytes { bytes in
                    sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), transient)
                }
            } else {
                sqlite3_result_error(context, SQLPredicate.damagedPayload, -1)
            }
            return
        }
        switch value {
        case .string(let text):
            var text = text
            // The text came out of a value SQLite held, at most SQLITE_MAX_LENGTH (10⁹) bytes, so
            // its length fits an Int32.
            text.withUTF8 { utf8 in
                sqlite3_result_text(context, utf8.baseAddress, Int32(utf8.count), transient)
            }
        case .integer(let number): sqlite3_result_int64(context, Int64(number))
        case .double(let number): sqlite3_result_double(context, number)
        case .date(let date): sqlite3_result_double(context, date.timeIntervalSince1970)
        case .bool(let flag): sqlite3_result_int64(context, flag ? 1 : 0)
        default: sqlite3_result_null(context)
        }
    }

    /// SQLite copies a result or a bound value marked transient before the call returns (the
    /// storage's node rows are bound with it too).
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// The attribute's value (or the relationship target's key), or `nil` when an argument is
    /// missing, of the wrong type or damaged.
    private static func value(of arguments: UnsafeMutablePointer<OpaquePointer?>, target: Bool) -> Value? {
        let payload = arguments[0]
        let compressed = arguments[1]
        let rawSize = arguments[2]
        let name = arguments[3]
        // A payload read as bytes (as GRDB reads a blob column, text included); a flag and a size
        // as numbers; the name as text.
        let payloadType = sqlite3_value_type(payload)
        guard payloadType == SQLITE_BLOB || payloadType == SQLITE_TEXT,
            let isCompressed = integer(compressed).map({ $0 != 0 }),
            let size = integer(rawSize).flatMap(Int.init(exactly:)),
            sqlite3_value_type(name) == SQLITE_TEXT
        else { return nil }
        // SQLite's order: the pointer first, then its length.
        let bytes = UnsafeRawBufferPointer(start: sqlite3_value_blob(payload), count: Int(sqlite3_value_bytes(payload)))
        let nameBytes = UnsafeRawBufferPointer(
            start: sqlite3_value_text(name), count: Int(sqlite3_value_bytes(name)))
        do {
            guard isCompressed else {
                return target
                    ? try NodePayload.target(named: nameBytes, in: bytes)
                    : try NodePayload.attribute(named: nameBytes, in: bytes)
            }
            let inflated = try Zlib.decompress(Data(bytes), originalSize: size)
            return try inflated.withUnsafeBytes { inflated throws(StoreChainSQLiteError) in
                target
                    ? try NodePayload.target(named: nameBytes, in: inflated)
                    : try NodePayload.attribute(named: nameBytes, in: inflated)
            }
        } catch {
            return nil
        }
    }

    /// An INTEGER argument, or a REAL one holding a whole number (as GRDB reads them).
    private static func integer(_ argument: OpaquePointer?) -> Int64? {
        switch sqlite3_value_type(argument) {
        case SQLITE_INTEGER: sqlite3_value_int64(argument)
        case SQLITE_FLOAT: Int64(exactly: sqlite3_value_double(argument))
        default: nil
        }
    }
}
