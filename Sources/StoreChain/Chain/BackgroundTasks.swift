/// Work a handler starts that outlives the request that started it (a background revalidation,
/// a prefetch, an outbox's retry timer). The chain owns it: `Chain.shutdown()` waits for all of
/// it (but not for timers still waiting), so nothing is left running when an app or a test ends.
public final class BackgroundTasks: Sendable {
    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextID = 0
        var isShutDown = false
        /// Tasks still waiting for their delay (`run(after:clock:_:)`).
        var waiting: Set<Int> = []
    }

    private let state = Watched(State())

    /// No work yet.
    public init() {}

    /// Starts `operation` in the background. After shutdown it does not start, and this returns
    /// `false`.
    @discardableResult
    public func run(_ operation: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.isShutDown else { return false }
            let id = state.nextID
            state.nextID += 1
            state.tasks[id] = Task { [weak self] in
                await operation()
                _ = self?.state.withLock { $0.tasks.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Starts `operation` after `delay` on `clock` (a retry timer). Shutdown does not wait out the
    /// delay: a task still waiting then is cancelled, and its operation never runs. After
    /// shutdown it does not start, and this returns `false`.
    @discardableResult
    public func run(
        after delay: Duration, clock: any StoreClock, _ operation: @escaping @Sendable () async -> Void
    ) -> Bool {
        state.withLock { state in
            guard !state.isShutDown else { return false }
            let id = state.nextID
            state.nextID += 1
            state.waiting.insert(id)
            state.tasks[id] = Task { [weak self] in
                let slept = (try? await clock.sleep(for: delay)) != nil
                // Whoever takes it out of `waiting` first decides: this task runs it, or shutdown
                // cancelled it.
                let due = self?.state.withLock { $0.waiting.remove(id) != nil } ?? false
                if slept && due && !Task.isCancelled { await operation() }
                _ = self?.state.withLock { $0.tasks.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// How many background tasks are running.
    public var count: Int {
        state.withLock { $0.tasks.count }
    }

    /// Returns once `shutdown` has begun: no new work starts (for tests; see `Watched.wait`).
    package func waitForShutdown() async throws {
        try await state.wait(for: "the background tasks' shutdown to begin") { $0.isShutDown }
    }

    /// Returns once no work runs: every task left is a timer waiting for its delay (for tests;
    /// see `Watched.wait`).
    package func waitForIdle() async throws {
        try await state.wait(for: "the background work to finish") { state in
            state.tasks.keys.allSatisfy(state.waiting.contains)
        }
    }

    /// Stops new work and waits for the running work to finish, cancelling it first if asked.
    public func shutdown(cancelling: Bool = false) async {
        while true {
            let running = state.withLock { state in
                state.isShutDown = true
                for id in state.waiting { state.tasks[id]?.cancel() }
                state.waiting.removeAll()
                return Array(state.tasks.values)
            }
            if running.isEmpty { return }
            for task in running {
                if cancelling { task.cancel() }
                await task.value
            }
        }
    }
}
