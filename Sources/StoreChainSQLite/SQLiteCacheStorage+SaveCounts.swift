import GRDB
import StoreChain

// The file's count of saves per entity, which orders the writes of every process sharing it.
extension SQLiteCacheStorage {
    /// The counts of saves per entity the file records (in `meta`, under `saves <entity>`).
    static func saveCounts(_ db: Database) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT key, value FROM meta WHERE key LIKE 'saves %'"))
        while let row = try rows.next() {
            let key: String = try row.decode(String.self, forColumn: "key")
            let value: String = try row.decode(String.self, forColumn: "value")
            counts[String(key.dropFirst(saveCountPrefix.count))] = Int64(value) ?? 0
        }
        return counts
    }

    /// Takes in the saves other processes recorded since this one last looked (`SaveOrder`), so
    /// a write checked after this is not stored over them; returns the counts it read. Run in the
    /// write's transaction.
    @discardableResult
    func catchUpWithOtherProcesses(_ db: Database) throws -> [String: Int64] {
        let counts = try Self.saveCounts(db)
        saveOrder.catchUp(recorded: counts)
        return counts
    }

    /// Records a write that changed `entities` (a save's, or a change heard of): another process
    /// whose answer was read before it does not store it after (`catchUpWithOtherProcesses`).
    /// Run in the write's transaction, after `catchUpWithOtherProcesses` read `counts`.
    func recordSave(of entities: Set<String>, over counts: [String: Int64], _ db: Database) throws {
        guard !entities.isEmpty else { return }
        var raised: [String: Int64] = [:]
        for entity in entities {
            let count = (counts[entity] ?? 0) &+ 1
            raised[entity] = count
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
                .execute(arguments: [Self.saveCountPrefix + entity, String(count)])
        }
        saveOrder.record(raised)
    }

    private static let saveCountPrefix = "saves "
}
