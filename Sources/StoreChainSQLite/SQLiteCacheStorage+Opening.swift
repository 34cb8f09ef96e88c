import Foundation
import GRDB
import StoreChain

// Opening the cache file: taking it as it is, or moving a damaged one aside and starting anew.
extension SQLiteCacheStorage {
    func openOrRebuild() -> DatabasePool? {
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
    func unwritableReason() -> String? {
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

    func rebuild() -> DatabasePool? {
        moveAside()
        do {
            return try open()
        } catch {
            logger.warning("disk-cache: cannot create \(path) (\(error)); caching on disk is off")
            return nil
        }
    }

    func moveAside() {
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

    func open() throws -> DatabasePool {
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
                try claimFile(db)
                try catchUpWithOtherProcesses(db)
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
    func migrate(_ db: Database) throws {
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
    static func readsColumn(_ reads: Set<String>) -> String {
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
    static func verifySchema(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
        // The target indexes made on demand, each exactly as this version makes it.
        let stored = try rows.compactMap { row -> String? in
            let name = try row.decode(String.self, forColumn: "name")
            let sql = try row.decode(String.self, forColumn: "sql")
            return isTargetIndex(name: name, sql: sql) ? nil : sql
        }
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
