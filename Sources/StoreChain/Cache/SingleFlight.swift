/// Runs one operation per key at a time: callers that arrive while it runs wait for its result
/// instead of starting their own. Waiters get the first caller's result or error; a waiter whose
/// task is cancelled stops waiting at once with `CancellationError` (the run goes on for the rest).
/// When the caller whose run it is gets cancelled, its failure is its own: the run passes to a
/// waiter, which runs its own operation for the others.
final class SingleFlight<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value?, any Error>

    private struct State {
        /// The waiters of each key's run in flight; a key is present while its run is.
        var flights: [String: [Int: Waiter]] = [:]
        var nextWaiter = 0
    }

    private let state = Watched(State())

    private enum Role { case first, joined, cancelled }

    /// Runs `operation`, or joins the run already in flight for `key`.
    func run(_ key: String, _ operation: () async throws -> Value) async throws -> Value {
        let waiter = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        // `nil` means "nobody is running it: you are the one who does".
        let joined: Value? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let role = state.withLock { state -> Role in
                    guard state.flights[key] != nil else {
                        state.flights[key] = [:]
                        return .first
                    }
                    // Checked under the lock the cancellation handler takes: either it finds
                    // this waiter registered, or this sees the cancellation.
                    if Task.isCancelled { return .cancelled }
                    state.flights[key]?[waiter] = continuation
                    return .joined
                }
                switch role {
                case .first: continuation.resume(returning: nil)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .joined: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { $0.flights[key]?.removeValue(forKey: waiter) }
            cancelled?.resume(throwing: CancellationError())
        }
        if let joined { return joined }
        let result: Result<Value, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        if case .failure = result, Task.isCancelled {
            let heir = state.withLock { state -> Waiter? in
                guard let (id, heir) = state.flights[key]?.first else {
                    state.flights.removeValue(forKey: key)
                    return nil
                }
                state.flights[key]?.removeValue(forKey: id)
                return heir
            }
            heir?.resume(returning: nil)
            return try result.get()
        }
        let waiters = state.withLock { $0.flights.removeValue(forKey: key) ?? [:] }
        for waiter in waiters.values { waiter.resume(with: result.map { Optional($0) }) }
        return try result.get()
    }

    /// How many callers wait for the run in flight for `key` (for tests).
    func waiterCount(for key: String) -> Int { state.withLock { $0.flights[key]?.count ?? 0 } }

    /// Returns once at least `count` callers wait for the run in flight for `key` (for tests; see
    /// `Watched.wait`).
    package func waitForWaiters(_ count: Int, for key: String) async throws {
        try await state.wait(for: "\(count) callers waiting for the run of '\(key)'") {
            $0.flights[key]?.count ?? 0 >= count
        }
    }
}
