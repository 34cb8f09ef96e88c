import Logging
import PostgresNIO
import StoreChain

// What processes sharing the cache tell each other: the changes they write, and who fetches a
// request they all miss.
extension PostgresCacheStorage {
    // MARK: Changes elsewhere

    /// The saves, deletions and refreshes other processes write to this namespace, as they
    /// commit (heard through `LISTEN` on a connection of its own while anyone reads them).
    public func changesFromElsewhere() -> AsyncStream<ChangeEvent>? {
        listener.changes()
    }

    /// Returns once changes from elsewhere are listened for (a change made before is not heard
    /// of): for tests.
    package func untilListening() async {
        await listener.untilListening()
    }

    // MARK: Claims

    /// Claims `key` with a session advisory lock on the shared connection: the lock ends when
    /// the claim is released, or with the session when the process dies. Keys are hashed, so two
    /// keys may rarely share a lock: one then waits for the other, and fetches itself.
    @concurrent public func claim(_ key: String) async -> CacheClaim? {
        accessProbe.withLock { $0 }?()
        let scope = "storechain claims \(schema.name)/\(namespace)"
        do {
            let held = try await connections.withSharedConnection { [self] connection in
                try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtext(\(scope)), hashtext(\(key)))", logger: logger
                ).collect().first?.decode(Bool.self)
            }
            guard held == true else { return nil }
        } catch {
            // The server is out of reach: nobody else can be waited for, so this process fetches.
            return CacheClaim {}
        }
        return CacheClaim { [connections, logger] in
            do {
                try await connections.withSharedConnection { connection in
                    try await connection.query(
                        "SELECT pg_advisory_unlock(hashtext(\(scope)), hashtext(\(key)))", logger: logger)
                }
            } catch {
                // The session that held the lock is gone, and the lock with it.
                logger.debug("postgres-cache: releasing the claim on \(key) failed: \(error)")
            }
        }
    }

    /// Calls `probe` before each use of the server, where that use runs: for tests that check
    /// the storage's work leaves the caller's executor.
    package func setAccessProbe(_ probe: (@Sendable () -> Void)?) {
        accessProbe.withLock { $0 = probe }
    }
}
