import Foundation
import Logging
import PostgresNIO
import StoreChain
import Synchronization

/// The connections one process keeps to a PostgreSQL server: one shared by single statements
/// (PostgreSQL runs the statements a connection is sent one after another, so concurrent reads
/// queue on it instead of opening a connection each) and a few leased one at a time for
/// transactions.
///
/// When the server cannot be reached, the first attempt fails with the reason and logs a warning
/// once; for `retryInterval` after it, every use fails at once without trying (so a cache in
/// front of it answers from upstream without waiting on the network), then one attempt is made
/// again. When the server is back, a notice says so. No statement or transaction waits longer
/// than `answerTimeout` (a real-time guard, not a wait of the chain's clock): PostgresNIO sets no
/// time limit on a statement, so one whose server stopped answering (a network that dropped, a
/// connection closed under it) held the request that sent it forever; past the guard the use
/// fails as with an unreachable server, and the connection is closed. Opening a connection is
/// bounded by `connectTimeout`.
final class PostgresConnections: Sendable {
    let address: PostgresAddress
    /// Who uses the connections, for log lines and errors (`postgres-cache at music.yml:7`).
    let user: String
    let connectTimeout: Duration
    let retryInterval: Duration
    /// The longest a statement or a transaction may take.
    let answerTimeout: Duration
    private let clock: any StoreClock
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var shared: PostgresConnection?
        /// The task opening the shared connection, while it does.
        var opening: Task<PostgresConnection, any Error>?
        var idle: [PostgresConnection] = []
        /// Until when a use fails without trying.
        var unreachableUntil: Date?
        var lastFailure: String?
        var nextID = 1
    }

    /// The most connections kept idle for transactions; more are opened when needed and closed
    /// after use.
    private let maxIdle = 4

    init(
        address: PostgresAddress, user: String, connectTimeout: Duration = .seconds(2),
        retryInterval: Duration = .seconds(1), answerTimeout: Duration = .seconds(10),
        clock: any StoreClock = SystemClock(), logger: Logger
    ) {
        self.clock = clock
        self.address = address
        self.user = user
        self.connectTimeout = connectTimeout
        self.retryInterval = retryInterval
        self.answerTimeout = answerTimeout
        self.logger = logger
    }

    deinit {
        let connections = state.withLock { state in
            (state.shared.map { [$0] } ?? []) + state.idle
        }
        for connection in connections { connection.closeInBackground() }
    }

    /// Runs one statement (or a few that need no transaction) on the shared connection. When
    /// the connection turns out to be closed (the server restarted), `body` runs once more on a
    /// new one: reads are safe to repeat.
    @discardableResult
    func withSharedConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T)
        async throws -> T
    {
        do {
            let connection = try await sharedConnection()
            do {
                return try await answered("a statement", closing: connection) { try await body(connection) }
            } catch  where connection.isClosed {
                logger.debug("\(user): the shared connection to \(address) closed; opening another")
                let replacement = try await sharedConnection(replacing: connection)
                return try await answered("a statement", closing: replacement) { try await body(replacement) }
            }
        } catch {
            throw described(error)
        }
    }

    /// Closes `connection`, which no one is to use again: the next use of the shared connection
    /// opens another.
    private func forget(_ connection: PostgresConnection) {
        state.withLock { state in
            if state.shared === connection { state.shared = nil }
        }
        connection.closeInBackground()
    }

    /// The result of `operation`, or `.sharedState` once it has taken `answerTimeout`, when
    /// `connection` is closed and the operation is left to end by itself: the caller goes on
    /// without the server. Cancelling the caller cancels the operation.
    private func answered<T: Sendable>(
        _ what: String, closing connection: PostgresConnection, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let pending = PendingAnswer<T>()
        let (user, address, timeout) = (user, address, answerTimeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.waiter.withLock { $0 = continuation }
                let guardTask = Task {
                    // Real time: the guard bounds a hang, whatever clock the chain runs on.
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled, let waiting = pending.waiter.withLock({ $0.take() }) else { return }
                    self.forget(connection)
                    waiting.resume(
                        throwing: StoreChainError(
                            .sharedState, "\(user): PostgreSQL at \(address) did not answer \(what) within \(timeout)",
                            suggestion: "requests go upstream meanwhile; if it lasts, check the server and the network")
                    )
                }
                pending.work.withLock {
                    $0 = Task {
                        let result: Result<T, any Error>
                        do { result = .success(try await operation()) } catch { result = .failure(error) }
                        guardTask.cancel()
                        pending.waiter.withLock { $0.take() }?.resume(with: result)
                    }
                }
            }
        } onCancel: {
            pending.work.withLock { $0 }?.cancel()
        }
    }

    /// The shared connection, opened by one task while the others wait for it: never two at
    /// once, since replacing a connection closes it under the statements (and the claims) of
    /// the tasks using it.
    private func sharedConnection(replacing closed: PostgresConnection? = nil) async throws -> PostgresConnection {
        if let open = state.withLock({ $0.shared }), !open.isClosed, open !== closed { return open }
        let opening = state.withLock { state in
            if let task = state.opening { return task }
            let task = Task { try await self.openShared() }
            state.opening = task
            return task
        }
        return try await opening.value
    }

    /// Opens a connection and makes it the shared one, closing the one it replaces.
    private func openShared() async throws -> PostgresConnection {
        do {
            let connection = try await connect()
            let replaced = state.withLock { state in
                defer { (state.shared, state.opening) = (connection, nil) }
                return state.shared
            }
            replaced?.closeInBackground()
            return connection
        } catch {
            state.withLock { $0.opening = nil }
            throw error
        }
    }

    /// Runs `body` on a connection of its own, closed when it ends (a listener's, which holds
    /// its connection for as long as it listens).
    func withOwnConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await connect()
        defer { connection.closeInBackground() }
        return try await body(connection)
    }

    /// Runs `body` in a transaction on a connection no one else uses meanwhile. A connection
    /// found closed when the transaction begins (the server restarted) is replaced once.
    @discardableResult
    func withTransaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T)
        async throws -> T
    {
        var connection = try await lease()
        do {
            do {
                try await answered("BEGIN", closing: connection) { [connection, logger] in
                    _ = try await connection.query("BEGIN", logger: logger)
                }
            } catch  where connection.isClosed {
                connection = try await connect()
                try await answered("BEGIN", closing: connection) { [connection, logger] in
                    _ = try await connection.query("BEGIN", logger: logger)
                }
            }
            let value = try await answered("a transaction", closing: connection) { [connection, logger] in
                let value = try await body(connection)
                _ = try await connection.query("COMMIT", logger: logger)
                return value
            }
            giveBack(connection)
            return value
        } catch {
            // A failed statement or commit leaves the transaction unusable: the connection is
            // closed rather than rolled back and reused, which also ends any lock it held.
            connection.closeInBackground()
            throw described(error)
        }
    }

    /// A statement's error as a `StoreChainError` that says what the server said (a
    /// `PSQLError` describes itself only as "Generic description"); other errors unchanged.
    private func described(_ error: any Error) -> any Error {
        guard error is PSQLError else { return error }
        return StoreChainError(
            .sharedState, "\(user): a statement on PostgreSQL at \(address) failed: \(Self.reason(error))",
            suggestion: "requests go upstream meanwhile; if it lasts, check the server's log")
    }

    /// Why the server cannot be used now, when an attempt failed less than `retryInterval` ago.
    private func failingFast() -> StoreChainError? {
        let now = clock.now
        return state.withLock { state in
            guard let until = state.unreachableUntil, now < until else { return nil }
            return StoreChainError(
                .sharedState,
                "\(user): PostgreSQL at \(address) is out of reach (\(state.lastFailure ?? "no answer"))",
                suggestion: "requests go upstream meanwhile; another attempt is made within \(retryInterval)")
        }
    }

    private func lease() async throws -> PostgresConnection {
        while let idle = state.withLock({ $0.idle.popLast() }) {
            if !idle.isClosed { return idle }
        }
        return try await connect()
    }

    private func giveBack(_ connection: PostgresConnection) {
        let kept = state.withLock { state in
            guard state.idle.count < maxIdle else { return false }
            state.idle.append(connection)
            return true
        }
        if !kept { connection.closeInBackground() }
    }

    private func connect() async throws -> PostgresConnection {
        if let error = failingFast() { throw error }
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var configuration = try address.configuration
        configuration.options.connectTimeout = .nanoseconds(
            connectTimeout.components.seconds * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000)
        do {
            // `connectTimeout` bounds the start-up as well as the socket's connection.
            let connection = try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
            let recovered = state.withLock { state in
                defer { (state.unreachableUntil, state.lastFailure) = (nil, nil) }
                return state.lastFailure
            }
            if let recovered {
                logger.notice("\(user): PostgreSQL at \(address) is reachable again (it was: \(recovered))")
            }
            return connection
        } catch {
            let reason = Self.reason(error)
            let until = clock.now.addingTimeInterval(retryInterval.timeInterval)
            let firstFailure = state.withLock { state in
                defer { (state.unreachableUntil, state.lastFailure) = (until, reason) }
                return state.lastFailure == nil
            }
            if firstFailure {
                logger.warning(
                    "\(user): cannot use PostgreSQL at \(address): \(reason); requests go upstream until it is back")
            }
            throw StoreChainError(
                Self.isAuthentication(error) ? .invalidPipeline : .sharedState,
                "\(user): cannot use PostgreSQL at \(address): \(reason)",
                suggestion: Self.isAuthentication(error)
                    ? "check the user and password in the URL (and the server's pg_hba.conf)"
                    : "check that the server runs and listens there; requests go upstream meanwhile")
        }
    }

    /// What went wrong, as the server or the socket said it (a `PSQLError`'s description hides
    /// the server's message).
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    private static func isAuthentication(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let code = error.serverInfo?[.sqlState] else { return false }
        // 28P01 invalid_password, 28000 invalid_authorization_specification.
        return code.hasPrefix("28")
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting for it to close. The connection is kept until it
    /// has closed (PostgresNIO requires a connection to be closed before it is released).
    func closeInBackground() {
        let closed: EventLoopFuture<Void> = close()
        closed.whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

/// Who waits for one use of the server, and the task making it: shared by the use and its guard.
private final class PendingAnswer<T: Sendable>: Sendable {
    let waiter = Mutex<CheckedContinuation<T, any Error>?>(nil)
    let work = Mutex<Task<Void, Never>?>(nil)
}
