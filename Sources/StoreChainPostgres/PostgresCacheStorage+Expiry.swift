import Foundation
import PostgresNIO
import StoreChain

// Making everything stale at once (a change feed down too long), apart from the storage's reads
// and writes.
extension PostgresCacheStorage {
    /// Makes this namespace's entries stale from `now` on, keeping them (the other processes
    /// sharing them see them stale too, and revalidate them before use).
    @concurrent public func expire(at now: Date) async throws {
        // Freshness is JSON text whose dates count seconds from 2001 (`JSONEncoder`'s default).
        let at = now.timeIntervalSinceReferenceDate
        try await modify { [self] connection in
            for table in [schema.nodes, schema.queries, schema.collections] {
                try await connection.query(
                    """
                    UPDATE \(unescaped: table) SET freshness = jsonb_set(
                        freshness::jsonb, '{expiresAt}',
                        to_jsonb(LEAST(COALESCE((freshness::jsonb ->> 'expiresAt')::float8, \(at)), \(at))))::text
                    WHERE namespace = \(namespace)
                    """, logger: logger)
            }
        }
    }
}
