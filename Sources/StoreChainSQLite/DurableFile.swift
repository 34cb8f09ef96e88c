import Foundation
import GRDB
import StoreChain

/// A SQLite file that holds the only copy of its data (a store's objects, an outbox's saves):
/// created owner-only with its directory, written with WAL and `synchronous = FULL` so a write
/// that returned survives a crash, and never moved aside or rebuilt — a damaged file is a
/// `store-file` error that says what to do.
enum DurableFile {
    /// Opens (or creates) the file and its tables, after checking its schema version and its
    /// integrity.
    ///
    /// - Parameters:
    ///   - kind: What the file is, for messages ("store", "outbox").
    ///   - applicationID: What marks the file as this kind's (`PRAGMA application_id`), so one
    ///     kind's file is never opened as another's; 0 for store files, which predate it.
    ///   - schema: The SQL that creates the tables in an empty file.
    static func open(
        _ path: String, kind: String, applicationID: Int32 = 0, busyTimeout: Duration, schemaVersion: Int,
        schema: String
    ) throws(StoreChainError) -> DatabaseQueue {
        do {
            let queue = try create(path, kind: kind, busyTimeout: busyTimeout)
            try queue.write { db in
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let tables = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
                let marker = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                if tables > 0, marker != applicationID {
                    throw error(
                        "the file is not a StoreChain \(kind) file", path: path, kind: kind, underlying: nil,
                        suggestion: "point 'path' at the \(kind) file, or at a new one")
                }
                switch version {
                case schemaVersion: return
                case 0 where tables == 0:
                    try db.execute(
                        sql: schema
                            + "\nPRAGMA user_version = \(schemaVersion);\nPRAGMA application_id = \(applicationID);")
                default:
                    throw error(
                        "the file is not a StoreChain \(kind) of schema version \(schemaVersion) (it has version \(version))",
                        path: path, kind: kind, underlying: nil,
                        suggestion: "open it with the StoreChain version that wrote it, or point 'path' at another file"
                    )
                }
            }
            let integrity = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check(1)") }
            guard integrity == "ok" else {
                throw error(
                    "the \(kind) file is damaged (\(integrity ?? "no answer from quick_check"))", path: path,
                    kind: kind, underlying: nil,
                    suggestion:
                        "restore it from a backup; StoreChain never rebuilds a \(kind) file, since that loses data")
            }
            return queue
        } catch let error as StoreChainError {
            throw error
        } catch {
            throw Self.error("cannot open the \(kind) file", path: path, kind: kind, underlying: error)
        }
    }

    private static func create(_ path: String, kind: String, busyTimeout: Duration) throws -> DatabaseQueue {
        let manager = FileManager.default
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        if !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw error("cannot create the \(kind) file", path: path, kind: kind, underlying: nil)
            }
        }
        var configuration = Configuration()
        configuration.label = "storechain.\(kind)"
        let (seconds, attoseconds) = busyTimeout.components
        configuration.busyMode = .timeout(Double(seconds) + Double(attoseconds) * 1e-18)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        return queue
    }

    /// A `store-file` error about the file at `path`; a damaged file says so whatever the
    /// message.
    static func error(
        _ message: String, path: String, kind: String, underlying: (any Error)?,
        suggestion: String = "check the path and its permissions"
    ) -> StoreChainError {
        if let error = underlying as? DatabaseError,
            error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
        {
            return StoreChainError(
                .storeFile, "the \(kind) file is damaged or not a database", at: .init(file: path),
                suggestion: "restore it from a backup; StoreChain never rebuilds a \(kind) file, since that loses data",
                underlying: error, detail: error.message)
        }
        return StoreChainError(
            .storeFile, message, at: .init(file: path), suggestion: suggestion, underlying: underlying)
    }
}
