import Logging
import PostgresNIO
import StoreChain

// The namespace's count of saves per entity, which orders the writes of every process sharing it.
extension PostgresCacheStorage {
    /// Makes sure `entities` have a row in the counts of saves, each in a statement of its own
    /// (so no write's transaction holds a new row while it waits for another's).
    func ensureSaveCounts(of entities: Set<String>) async throws {
        let missing = countedEntities.withLock { entities.subtracting($0) }
        guard !missing.isEmpty else { return }
        try await connections.withSharedConnection { [self] connection in
            _ = try await connection.query(
                """
                INSERT INTO \(unescaped: schema.saveCounts) (namespace, entity, count)
                SELECT \(namespace), entity, 0 FROM unnest(\(missing.sorted())::text[]) AS entity ORDER BY entity
                ON CONFLICT (namespace, entity) DO NOTHING
                """, logger: logger
            ).collect()
        }
        countedEntities.withLock { $0.formUnion(missing) }
    }

    /// Takes in the saves other processes recorded for what `write` holds or changes since this
    /// one last looked (`SaveOrder`), holding their rows until the transaction ends: shared for an
    /// answer, so a save that changes them waits for it (and then drops what it stored), and
    /// exclusive for a save's or a change's write, which `recordSave` then counts. Rows are taken
    /// in the entities' order, so two writes never wait for each other.
    func catchUpWithOtherProcesses(for write: CacheWrite, on connection: PostgresConnection) async throws {
        let entities = write.entities.union(write.invalidated).sorted()
        guard !entities.isEmpty else { return }
        let mode = write.invalidated.isEmpty ? "SHARE" : "UPDATE"
        var counts: [String: Int64] = [:]
        for try await (entity, count) in try await connection.query(
            """
            SELECT entity, count FROM \(unescaped: schema.saveCounts)
            WHERE namespace = \(namespace) AND entity = ANY(\(entities)) ORDER BY entity FOR \(unescaped: mode)
            """, logger: logger
        ).decode((String, Int64).self) {
            counts[entity] = count
        }
        saveOrder.catchUp(recorded: counts)
    }

    /// Counts a save (or a change heard of) of `entities`: another process whose answer was read
    /// before it does not store it after. Run after `catchUpWithOtherProcesses`, in the same
    /// transaction.
    func recordSave(of entities: Set<String>, on connection: PostgresConnection) async throws {
        guard !entities.isEmpty else { return }
        var raised: [String: Int64] = [:]
        for try await (entity, count) in try await connection.query(
            """
            UPDATE \(unescaped: schema.saveCounts) SET count = count + 1
            WHERE namespace = \(namespace) AND entity = ANY(\(entities.sorted())) RETURNING entity, count
            """, logger: logger
        ).decode((String, Int64).self) {
            raised[entity] = count
        }
        saveOrder.record(raised)
    }

    /// The counts of every entity of the namespace, as the order of saves starts from.
    func learnSaveCounts(on connection: PostgresConnection) async throws {
        var counts: [String: Int64] = [:]
        for try await (entity, count) in try await connection.query(
            "SELECT entity, count FROM \(unescaped: schema.saveCounts) WHERE namespace = \(namespace)",
            logger: logger
        ).decode((String, Int64).self) {
            counts[entity] = count
        }
        saveOrder.catchUp(recorded: counts)
        countedEntities.withLock { $0.formUnion(counts.keys) }
    }
}
