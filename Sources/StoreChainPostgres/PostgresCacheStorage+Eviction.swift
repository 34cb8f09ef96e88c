import PostgresNIO
import StoreChain

// The namespace's least-recently-used order, and eviction by it down to `maxBytes`.
extension PostgresCacheStorage {
    /// Marks entries read since the last write as recently used.
    func markUse(on connection: PostgresConnection) async throws {
        let touched = touches.withLock { touches in
            defer { touches = ([], []) }
            return touches
        }
        let now = "extract(epoch FROM clock_timestamp())"
        if !touched.nodes.isEmpty {
            try await connection.query(
                """
                UPDATE \(unescaped: schema.nodes) SET last_used = \(unescaped: now)
                WHERE namespace = \(namespace) AND id = ANY(\(touched.nodes.sorted()))
                """, logger: logger)
        }
        if !touched.queries.isEmpty {
            try await connection.query(
                """
                UPDATE \(unescaped: schema.queries) SET last_used = \(unescaped: now)
                WHERE namespace = \(namespace) AND key = ANY(\(touched.queries.sorted()))
                """, logger: logger)
        }
    }

    /// Evicts least recently used entries of this namespace until its payloads fit `maxBytes`.
    /// Evicting a node of a complete collection makes the collection incomplete.
    func evict() async throws {
        try await modify { [self] connection in
            var excess = -maxBytes
            for try await bytes in try await connection.query(
                """
                SELECT (SELECT coalesce(sum(size), 0) FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace))
                     + (SELECT coalesce(sum(size), 0) FROM \(unescaped: schema.queries) WHERE namespace = \(namespace))
                """, logger: logger
            ).decode(Int.self) {
                excess += bytes
            }
            while excess > 0 {
                var oldest: [(kind: String, key: String, entity: String, size: Int)] = []
                for try await victim in try await connection.query(
                    """
                    SELECT 'node', id, entity, size, last_used FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace)
                    UNION ALL
                    SELECT 'query', key, entity, size, last_used FROM \(unescaped: schema.queries) WHERE namespace = \(namespace)
                    ORDER BY last_used LIMIT 256
                    """, logger: logger
                ).decode((String, String, String, Int, Double).self) {
                    oldest.append((victim.0, victim.1, victim.2, victim.3))
                }
                var victims: [(kind: String, key: String, entity: String, size: Int)] = []
                for victim in oldest where excess > 0 {
                    victims.append(victim)
                    excess -= victim.size
                }
                if victims.isEmpty { return }
                let nodes = victims.filter { $0.kind == "node" }
                try await connection.query(
                    "DELETE FROM \(unescaped: schema.nodes) WHERE namespace = \(namespace) AND id = ANY(\(nodes.map(\.key)))",
                    logger: logger)
                try await connection.query(
                    """
                    DELETE FROM \(unescaped: schema.collections)
                    WHERE namespace = \(namespace) AND entity = ANY(\(Array(Set(nodes.map(\.entity)))))
                    """, logger: logger)
                try await connection.query(
                    """
                    DELETE FROM \(unescaped: schema.queries)
                    WHERE namespace = \(namespace) AND key = ANY(\(victims.filter { $0.kind == "query" }.map(\.key)))
                    """, logger: logger)
            }
        }
    }
}
