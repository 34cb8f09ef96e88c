import Foundation
import GRDB
import StoreChain

// What the file holds, and keeping it under `maxBytes`: least recently used entries go first.
extension SQLiteCacheStorage: InspectableCacheStorage {
    /// The file's path.
    public var location: String { path }

    /// What the file holds now.
    public func statistics() async throws -> Statistics { try await statistics(now: Date()) }

    /// What the file holds (`storedBytes` is the file's size on disk).
    public typealias Statistics = CacheStatistics

    /// What the file holds, with entries expired by `now`.
    @concurrent public func statistics(now: Date) async throws -> Statistics {
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
                expired: expired, payloadBytes: try Self.payloadBytes(db), storedBytes: fileBytes())
        }
    }

    static func payloadBytes(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT (SELECT IFNULL(SUM(size), 0) FROM nodes) + (SELECT IFNULL(SUM(size), 0) FROM queries)")
            ?? 0
    }

    func nextUse() -> Int {
        useCounter.add(1, ordering: .relaxed).newValue
    }

    func fileBytes() -> Int {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }

    /// Records recent use, then evicts least recently used entries until the payloads fit.
    /// Evicting a node of a complete collection makes the collection incomplete.
    func evict(_ db: Database) throws {
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
}
