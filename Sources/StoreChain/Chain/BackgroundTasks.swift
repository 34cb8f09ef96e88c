/// Work a handler starts that outlives the request that started it (a background revalidation,
/// a prefetch). The chain owns it: `Chain.shutdown()` waits for all of it, so nothing is left
/// running when an app or a test ends.
public final class BackgroundTasks: Sendable {
    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextID = 0
        var isShutDown = false
    }

    private let state = Locked(State())

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

    /// How many background tasks are running.
    public var count: Int {
        state.withLock { $0.tasks.count }
    }

    /// Stops new work and waits for the running work to finish, cancelling it first if asked.
    public func shutdown(cancelling: Bool = false) async {
        while true {
            let running = state.withLock { state in
                state.isShutDown = true
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
