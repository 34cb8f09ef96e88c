import Foundation
import StoreChain

/// Lets the app save while the backend cannot be reached: every save is recorded in a SQLite
/// file before it goes on, and a save the backend could not take yet is acknowledged as
/// pending and sent later, in order, exactly once.
///
/// 1. **Durable first.** A save is written to the outbox file (committed, `synchronous = FULL`)
///    before anything else, with an idempotency key it is always sent with.
/// 2. **In order.** Saves recorded earlier and still pending are sent first; a save goes on
///    only when none is left before it.
/// 3. **Pending.** When the backend cannot be reached (a transport error, a timeout, 408, 429,
///    5xx) the save answers normally with `SaveResult.pending` naming every object it changes;
///    inserted objects keep their temporary IDs. A save the backend refuses (400, 403, 404,
///    422 …) fails as it would without an outbox, and is not kept.
/// 4. **Replay.** Pending saves are sent again from the chain's first handler, so the caches
///    above store what the backend answers: after a retry delay that doubles with each failure,
///    whenever a request through the outbox succeeds, and on demand (`Chain.sync()`,
///    `ObjectContext.sync()`). Each is sent with its idempotency key, so a save that reached the
///    backend before a crash is not made twice. Saves that do not depend on each other replay
///    side by side, up to `parallel-replay` at once (`OutboxLanes`).
/// 5. **Identity.** When an insert reaches the backend, the later saves that refer to its
///    temporary ID are rewritten with the permanent one, and a change event carries the new
///    IDs (`ChangeEvent.permanentIDs`) and the objects sent (`ChangeEvent.sent`).
/// 6. **Refused later.** A replayed save the backend refuses is kept, marked failed, with the
///    saves after it that depend on objects it inserted; a change event withdraws what the app
///    saw of them (`ChangeEvent.rejected`, with the backend's error), and the objects it
///    changed are read again through the chain so the caches drop the optimistic values.
///
/// 7. **Read your writes.** While saves wait, reads show them: fetches and faults answered by
///    the backend are shown with the waiting saves applied, and fetches are evaluated again
///    whole over that (see `read(_:context:next:)`).
///
/// It sits below the caches and above pagination, batching and the traffic handlers.
///
/// ```swift
/// let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: "Caches/outbox.sqlite"))
/// let chain = Chain(terminal: remote) {
///     MemoryCache(model: model)
///     outbox
///     RetryHandler()
/// }
/// ```
public final class OutboxHandler: SaveHolding {
    public let name = "outbox"
    /// The outbox file, retry delays, coalescing and conflict policy.
    public let options: OutboxOptions
    /// The model fetches are evaluated against when waiting saves change their answers.
    public let model: ObjectModel
    /// Conflict resolvers by name, for `ConflictPolicy.named`.
    let resolvers: [String: ConflictResolver]
    let file: OutboxFile
    /// One sender at a time, so entries reach the backend in order.
    private let sending = AsyncLock()
    let state: Watched<State>

    struct State {
        /// The keys of recorded saves being sent now, with the entries each holds.
        var inFlight: [String: [Int64]] = [:]
        var pendingCount: Int
        /// Transient failures in a row, for the retry delay.
        var failures = 0
        /// Whether the last of them was the backend out of reach (rather than an answer such as
        /// 429 or 503, which a successful read does not contradict).
        var lastFailureWasUnreachable = false
        /// Whether a background send is about to run, and whether one waits for the retry delay.
        var sendScheduled = false
        var retryScheduled = false
        /// Permanent IDs learned from the backend, for saves made with a temporary ID the
        /// app has not seen replaced yet.
        var permanentIDs: [ObjectID: ObjectID] = [:]
        /// The saves not sent yet, for reads to show.
        var writes = PendingWrites()
        /// Saves' exchanges going on after the app was answered `pending` (one at most: it holds
        /// `sending` until it ends). A count, not a flag: the exchange may end, and count itself
        /// out, before the save that stopped waiting for it counts it in.
        var lingering = 0

        mutating func setScheduled(_ immediate: Bool, _ value: Bool) {
            if immediate { sendScheduled = value } else { retryScheduled = value }
        }
    }

    /// Opens (or creates) the outbox file; the saves it holds are sent once a request through
    /// the outbox succeeds, or when asked (`Chain.sync()`).
    ///
    /// - Parameters:
    ///   - model: the model fetches are evaluated against while saves wait (read-your-writes).
    ///   - options: the outbox file, retry delays, coalescing and conflict policy.
    ///   - resolvers: conflict resolvers by name, for `ConflictPolicy.named`.
    /// - Throws: `store-file` when the file cannot be created or read, or is damaged;
    ///   `invalid-request` when the conflict policy names no resolver given here.
    public init(model: ObjectModel, options: OutboxOptions, resolvers: [String: ConflictResolver] = [:])
        throws(StoreChainError)
    {
        if case .named(let name) = options.conflictPolicy, resolvers[name] == nil {
            throw StoreChainError(
                .invalidRequest, "the outbox's conflict-policy '\(name)' names no registered resolver",
                at: .init(path: "conflict-policy"),
                suggestion: "use server-wins, client-wins or merge, or register a resolver named '\(name)'"
                    + (resolvers.isEmpty ? "" : " (registered: \(resolvers.keys.sorted().joined(separator: ", ")))"))
        }
        self.model = model
        self.resolvers = resolvers
        self.options = options
        file = try OutboxFile(path: options.path)
        var state = State(pendingCount: try file.pendingCount())
        for entry in try file.entries() where entry.state == .pending { state.writes.add(entry.id, entry.changes) }
        self.state = Watched(state)
    }

    /// Every save the outbox holds, oldest first.
    public func entries() async throws -> [OutboxEntry] {
        try await withFile { file in try file.entries() }
    }

    /// How many saves wait to be sent.
    public var pendingCount: Int { state.withLock { $0.pendingCount } }

    /// Returns once at most `count` saves wait to be sent (for tests; see `Watched.wait`).
    package func waitForPending(atMost count: Int) async throws {
        try await state.wait(for: "at most \(count) saves pending in the outbox") { $0.pendingCount <= count }
    }

    /// Forgets a save, whatever its state: it will never be sent.
    ///
    /// - Throws: `invalid-request` when the outbox holds no entry `id`.
    public func discard(_ id: Int64) async throws {
        try await sending.withLock {
            try await self.withFile { file in
                _ = try Self.requireEntry(id, in: file)
                try file.remove([id])
            }
            self.state.withLock { $0.writes.remove(id) }
            try await self.countPending()
        }
    }

    /// Marks a failed save pending again, to be sent with the next ones.
    ///
    /// - Throws: `invalid-request` when the outbox holds no entry `id`.
    public func retry(_ id: Int64) async throws {
        try await sending.withLock {
            let entry = try await self.withFile { file in
                var entry = try Self.requireEntry(id, in: file)
                entry.state = .pending
                try file.update(entry)
                return entry
            }
            self.state.withLock { $0.writes.add(entry.id, entry.changes) }
            try await self.countPending()
        }
    }

    private static func requireEntry(_ id: Int64, in file: OutboxFile) throws(StoreChainError) -> OutboxEntry {
        guard let entry = try file.entry(id) else {
            throw StoreChainError(
                .invalidRequest, "the outbox \(file.path) holds no entry \(id)",
                suggestion: "list the entries with 'storechain outbox list'")
        }
        return entry
    }

    /// `PRAGMA integrity_check` of the outbox file: `ok` for a sound file.
    public func integrityCheck() async throws -> String {
        try await withFile { file in try file.integrityCheck() }
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        guard case .save(let changes) = request else {
            var answer: StoreResponse?
            if !state.withLock({ $0.writes.isEmpty }) {
                answer = try await read(request, context: context, next: next)
            }
            let response: StoreResponse
            if let answer { response = answer } else { response = try await next(request, context) }
            // The backend answered: a good moment to send what waits.
            scheduleSend(after: nil, context: context)
            return response
        }
        if let key = changes.idempotencyKey, let entries = state.withLock({ $0.inFlight[key] }) {
            // A recorded save this outbox is sending through the chain. Once the backend took
            // it, reads stop showing it before the caches above store its answer: a read in
            // between would show it twice (a held insert over the backend's copy).
            let response = try await next(request, context)
            if case .saved(let result) = response.result, !result.isPending { reached(entries, result) }
            return response
        }
        if state.withLock({ $0.lingering > 0 }) {
            // A save acknowledged earlier is still being sent, and this one would wait behind it:
            // it is recorded and acknowledged at once, and sent after it.
            var changes = changes.remapping(state.withLock { $0.permanentIDs })
            changes.idempotencyKey = UUID().uuidString
            let entry = try await record(changes, context: context)
            scheduleSend(after: nil, context: context)
            return pending(entry)
        }
        await sending.lock()
        // `save` unlocks: at once, or when an exchange it stopped waiting for ends.
        return try await save(changes, context: context, next: next)
    }

    public func sync(context: RequestContext) async throws -> Int {
        try await sending.withLock {
            _ = try await self.sendRecorded(before: nil, context: context)
            return self.pendingCount
        }
    }

    // MARK: Saving

    /// Records the save, sends the saves before it, then sends it; answers pending when the
    /// backend cannot be reached, or has not answered within `acknowledgeAfter` (the exchange
    /// goes on, and records its outcome when it ends). Called holding `sending`, which it
    /// releases when the exchange ends.
    private func save(_ changes: SaveChanges, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        var exchangeGoesOn = false
        defer { if !exchangeGoesOn { sending.unlock() } }
        var changes = changes.remapping(state.withLock { $0.permanentIDs })
        changes.idempotencyKey = UUID().uuidString
        let recorded = try await record(changes, context: context)
        let blocked = try await sendRecorded(before: recorded.id, context: context)
        // Sending the saves before it may have given its temporary IDs permanent ones.
        guard var entry = try await withFile({ file in try file.entry(recorded.id) }) else {
            throw StoreChainError(.unavailable, "the outbox entry of this save was discarded while it was being sent")
        }
        if blocked { return pending(entry) }
        let key = entry.changes.idempotencyKey ?? ""
        state.withLock { $0.inFlight[key] = [entry.id] }
        defer { if !exchangeGoesOn { state.withLock { _ = $0.inFlight.removeValue(forKey: key) } } }
        let exchange = SaveExchange()
        let sent = entry
        let started = context.background.run { [self] in
            guard let outcome = await exchange.run({ try await next(.save(sent.changes), context) }) else { return }
            await recordLate(sent, outcome, context: context)
            state.withLock { state in
                state.inFlight.removeValue(forKey: key)
                state.lingering -= 1
            }
            sending.unlock()
            // Saves recorded while it went on follow it.
            scheduleSend(after: nil, context: context)
        }
        let outcome: Result<StoreResponse, any Error>
        if started {
            guard let answered = await exchange.outcome(within: options.acknowledgeAfter, clock: context.clock) else {
                exchangeGoesOn = true
                state.withLock { $0.lingering += 1 }
                context.logger.notice(
                    "outbox: the backend has not answered a save yet; it is acknowledged as pending and goes on",
                    metadata: ["entry": "\(entry.id)"])
                return pending(entry)
            }
            outcome = answered
        } else {
            // The chain is shutting down: no exchange outlives it, so this one is awaited.
            do { outcome = .success(try await next(.save(entry.changes), context)) } catch { outcome = .failure(error) }
        }
        do {
            let response = try outcome.get()
            let result = try response.saveResult()
            try await completed([entry], result)
            return response
        } catch let error as StoreChainError where error.isTransient {
            try await attempted(&entry, error, context: context)
            backendUnavailable(error, context: context)
            return pending(entry)
        } catch is CancellationError {
            // The caller went away, not the save: it is recorded, so it is kept and sent later
            // (with its key, so once even if the backend took it just now).
            scheduleSend(after: options.retryDelay, context: context)
            return pending(entry)
        } catch {
            // Refused: the app sees the error as without an outbox, and nothing is kept.
            let id = entry.id
            try await withFile { file in try file.remove([id]) }
            state.withLock { $0.writes.remove(id) }
            try await countPending()
            throw error
        }
    }

    /// Records a save in the file, where reads see it until it is sent.
    private func record(_ changes: SaveChanges, context: RequestContext) async throws -> OutboxEntry {
        let now = context.clock.now
        let recorded = try await withFile { file in try file.append(changes, created: now) }
        state.withLock { $0.writes.add(recorded.id, recorded.changes) }
        try await countPending()
        return recorded
    }

    /// The answer to a save that waits in the outbox: every object it changes is pending;
    /// inserted objects keep their temporary IDs.
    private func pending(_ entry: OutboxEntry) -> StoreResponse {
        let result = SaveResult(
            nodes: entry.changes.inserted, deleted: entry.changes.deleted, pending: Set(entry.objectIDs))
        return StoreResponse(.saved(result), info: ResponseInfo(answeredBy: name, origin: .outbox))
    }

    // MARK: Scheduling

    /// Sends what waits in the background, after `delay` (at once when `nil`), unless a send is
    /// already scheduled or nothing waits. At once only when the last failure was the backend out
    /// of reach: after an error of its own (429, 5xx) to saves, the retry timer sends them.
    func scheduleSend(after delay: Duration?, context: RequestContext) {
        let immediate = delay == nil
        let schedule = state.withLock { state in
            guard state.pendingCount > 0, !(immediate ? state.sendScheduled : state.retryScheduled),
                !immediate || state.failures == 0 || state.lastFailureWasUnreachable
            else { return false }
            state.setScheduled(immediate, true)
            return true
        }
        guard schedule else { return }
        let services = context.services
        let send: @Sendable () async -> Void = { [self] in
            let context = RequestContext(services: services)
            state.withLock { $0.setScheduled(immediate, false) }
            guard !Task.isCancelled else { return }
            do {
                _ = try await sync(context: context)
            } catch {
                context.logger.warning("outbox: sending pending saves failed", metadata: ["error": "\(error)"])
            }
        }
        // A retry timer does not hold up the chain's shutdown; the saves stay in the file.
        let started =
            if let delay { context.background.run(after: delay, clock: context.clock, send) } else {
                context.background.run(send)
            }
        if !started { state.withLock { $0.setScheduled(immediate, false) } }
    }

    // MARK: The file

    func countPending() async throws {
        let count = try await withFile { file in try file.pendingCount() }
        state.withLock { $0.pendingCount = count }
    }

    /// Runs file work off the caller's executor: a save made from the main actor does not wait
    /// for SQLite's `fsync` there.
    @concurrent
    func withFile<T: Sendable>(_ body: @Sendable (OutboxFile) throws -> T) async throws -> T {
        try body(file)
    }
}
