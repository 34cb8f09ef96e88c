import Synchronization

/// Where reads wait while a change feed restored from its cursor file learns what changed while
/// the process was stopped: until then, what a disk cache that outlived the process holds is not
/// known to be current. It opens once, for good; a task that is cancelled stops waiting.
final class CatchUpGate: Sendable {
    private enum Stage {
        /// Reads wait; nobody is finishing the catch-up yet.
        case closed
        /// One task is finishing the catch-up (making the caches stale, say); reads still wait.
        case finishing
        case open
    }

    private struct State {
        var stage: Stage
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextWaiter = 0
    }

    /// Watched, so a test can wait until a read is held back.
    private let state: Watched<State>
    /// Whether the gate is open, set in the lock: once it is, a read costs one load.
    private let isOpen: Atomic<Bool>

    /// A gate that is open from the start when `closed` is false.
    init(closed: Bool) {
        state = Watched(State(stage: closed ? .closed : .open))
        isOpen = Atomic(!closed)
    }

    /// Returns once the gate is open; throws `CancellationError` when the task is cancelled first.
    func wait() async throws {
        guard !isOpen.load(ordering: .acquiring) else { return }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before it was registered, the handler below found nobody to end.
                let ready: Result<Void, any Error>? = state.withLock { state in
                    if case .open = state.stage { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Whether the caller is the first to finish the catch-up: it then does what it must before
    /// `open()`; everyone after gets false.
    func claim() -> Bool {
        state.withLock { state in
            guard case .closed = state.stage else { return false }
            state.stage = .finishing
            return true
        }
    }

    /// Lets every waiting and later read through.
    func open() {
        let waiters = state.withLock { state in
            state.stage = .open
            isOpen.store(true, ordering: .releasing)
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once `count` reads wait at the gate (for tests).
    func waitForWaitingReads(_ count: Int) async throws {
        try await state.wait(for: "\(count) read(s) waiting for the change feed to catch up") {
            $0.waiters.count >= count
        }
    }
}
