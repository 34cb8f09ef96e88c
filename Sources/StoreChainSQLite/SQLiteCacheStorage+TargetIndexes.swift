import GRDB
import StoreChain

/// Indexes of the keys nodes' to-one relationships lead to, one per entity and relationship a
/// filter compares (`Track where album.id == 5`, which answers `album.tracks` from a complete
/// collection after a restart): a lookup instead of reading every track's payload. Each is made
/// the first time a filter needs it, not with the schema, because every write of the entity
/// keeps it up to date: only what is asked for pays for it.
extension SQLiteCacheStorage {
    private static let targetIndexPrefix = "nodes_target:"

    /// The name of the index over `entity`'s nodes of the key `relationship` leads to.
    static func targetIndexName(entity: String, relationship: String) -> String {
        "\(targetIndexPrefix)\(entity).\(relationship)"
    }

    /// Its definition, exactly as SQLite keeps it (`ifNotExists` adds the clause to make it
    /// with, which SQLite does not keep). The expression is the one `SQLPredicate` filters with,
    /// so SQLite uses the index for it.
    static func targetIndexSQL(entity: String, relationship: String, ifNotExists: Bool = false) -> String {
        let name = targetIndexName(entity: entity, relationship: relationship).replacingOccurrences(
            of: "\"", with: "\"\"")
        return
            "CREATE INDEX \(ifNotExists ? "IF NOT EXISTS " : "")\"\(name)\" ON nodes (\(AttributeFunction.targetExpression(relationship))) "
            + "WHERE entity = \(AttributeFunction.literal(entity))"
    }

    /// Whether `name` and `sql` are a target index as this version makes it (`verifySchema`).
    static func isTargetIndex(name: String, sql: String) -> Bool {
        guard name.hasPrefix(targetIndexPrefix) else { return false }
        let parts = name.dropFirst(targetIndexPrefix.count).split(separator: ".", maxSplits: 1)
        guard parts.count == 2 else { return false }
        return sql == targetIndexSQL(entity: String(parts[0]), relationship: String(parts[1]))
    }

    /// Makes the indexes a filter of `entity` over `relationships` needs, tried once per file
    /// and process. One that cannot be made (a file on a full disk or opened read-only) is left
    /// out: the filter is then applied row by row, as right and slower.
    func makeTargetIndexes(of entity: String, _ relationships: Set<String>) {
        let names = Dictionary(
            uniqueKeysWithValues: relationships.map { (Self.targetIndexName(entity: entity, relationship: $0), $0) })
        let missing = targetIndexes.withLock { tried in
            let missing = names.filter { !tried.contains($0.key) }
            tried.formUnion(missing.keys)
            return missing
        }
        guard !missing.isEmpty else { return }
        do {
            try modify { db in
                for relationship in missing.values {
                    try db.execute(
                        sql: Self.targetIndexSQL(entity: entity, relationship: relationship, ifNotExists: true))
                }
            }
        } catch {
            logger.debug("disk-cache: no index of \(entity)'s \(missing.values.sorted()) in \(path): \(error)")
        }
    }
}
