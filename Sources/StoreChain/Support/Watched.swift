/// A value behind a lock that tasks can wait on: every change wakes the waiters whose condition
/// now holds. It is how the tests wait for what a handler does in the background (a fault joining
/// a batch, a task going to sleep on a clock, a save reaching the backend) without polling: the
/// change itself resumes them.
///
/// ```swift
/// let sleepers = Watched(0)
/// sleepers.withLock { $0 += 1 }  // wakes a waiter for "one sleeper"
/// try await sleepers.wait(for: "one sleeper") { $0 >= 1 }
/// ```
package final class Watched<Value: Sendable>: Sendable {
    private typealias Continuation = CheckedContinuation<Void, any Error>

    private struct Waiter {
        let condition: @Sendable (Value) -> Bool
        let continuation: Continuation
        /// Ends the wait with an error once the timeout has passed; cancelled when it ends before.
        var timer: Task<Void, Never>?
    }

    private struct State {
        var value: Value
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state: Locked<State>

    package init(_ value: Value) {
        state = Locked(State(value: value))
    }

    /// The value now.
    package var value: Value {
        state.withLock { $0.value }
    }

    /// Reads or changes the value under the lock, then wakes every waiter whose condition holds.
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        let (result, woken) = try state.withLock { (state) throws(E) -> (Result, [Waiter]) in
            let result = try body(&state.value)
            guard !state.waiters.isEmpty else { return (result, []) }
            var woken: [Waiter] = []
            for (id, waiter) in state.waiters where waiter.condition(state.value) {
                woken.append(waiter)
                state.waiters[id] = nil
            }
            return (result, woken)
        }
        for waiter in woken {
            waiter.timer?.cancel()
            waiter.continuation.resume()
        }
        return result
    }

    /// Returns once `condition` holds for the value (at once if it holds now). Fails with
    /// `StoreChainError.Code.timedOut`, naming `what` and the value then, when it has not held
    /// within `timeout` of real time: a guard so that a broken handler fails its test instead of
    /// hanging it, never the way the wait ends in a passing run. A cancelled task stops waiting
    /// with `CancellationError`.
    package func wait(
        for what: @autoclosure () -> String, timeout: Duration = .seconds(60),
        until condition: @escaping @Sendable (Value) -> Bool
    ) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let description = what()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Continuation) in
                let holds = state.withLock { state in
                    if condition(state.value) || Task.isCancelled { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if holds { return continuation.resume() }
                // Started once the waiter is registered, so it always finds the waiter it ends.
                let timer = Task { [weak self] in
                    // Real time on purpose: the guard against a hang, not the wait itself.
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    self?.end(id) { value in
                        StoreChainError(
                            .timedOut,
                            "waited \(timeout) for \(description); it did not happen (the value then: \(value))")
                    }
                }
                let waiting = state.withLock { state in
                    state.waiters[id]?.timer = timer
                    return state.waiters[id] != nil
                }
                if !waiting { timer.cancel() }
            }
        } onCancel: {
            end(id) { _ in CancellationError() }
        }
        try Task.checkCancellation()
    }

    /// Ends waiter `id` with the error `failure` makes of the value, if it still waits.
    private func end(_ id: Int, with failure: (Value) -> any Error) {
        let ended = state.withLock { state -> (Waiter, Value)? in
            guard let waiter = state.waiters.removeValue(forKey: id) else { return nil }
            return (waiter, state.value)
        }
        guard let (waiter, value) = ended else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(throwing: failure(value))
    }
}
