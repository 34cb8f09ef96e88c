import Foundation
import StoreChain

/// A task whose end a test waits for while it moves a manual clock for it: for work that polls
/// on the clock (a cache waiting for another process's claim) while it also does real work.
///
/// ```swift
/// let waiting = Finishing { try await second.send(.fetch(albums)) }
/// let answer = try await waiting.value(advancing: clock)
/// ```
public final class Finishing<Value: Sendable>: Sendable {
    private let task: Task<Value, any Error>
    private let ended = Watched(false)

    /// Starts `operation` in a task of its own.
    public init(_ operation: @escaping @Sendable () async throws -> Value) {
        let ended = self.ended
        task = Task {
            defer { ended.withLock { $0 = true } }
            return try await operation()
        }
    }

    /// Waits until at least `sleepers` tasks sleep on `clock`, or this task has ended (so a test
    /// whose task does not wait fails on its expectations instead of hanging).
    public func sleepsOrEnds(on clock: ManualClock, sleepers: Int) async throws {
        let ended = self.ended
        try await firstOf(
            { try await clock.waitForSleepers(sleepers) },
            { try await ended.wait(for: "the task to end") { $0 } })
    }

    /// The task's value, moving `clock` on to the next wake-up whenever one is due within `step`
    /// (a wait polling for another process), woken by the sleep or by the task's end (no
    /// polling). A sleeper further off (a request held for 30 s, a listener waiting to
    /// reconnect) is left alone: advancing for it while the task does real work (a query to
    /// PostgreSQL) would let the clock race ahead of the task, as it did on a loaded machine,
    /// where a 1 s deadline then passed 2 s. A task that neither ends nor sleeps so within a
    /// minute is cancelled and fails the test with a `timedOut` error, rather than hanging it.
    public func value(advancing clock: ManualClock, within step: Duration = .milliseconds(20)) async throws -> Value {
        let ended = self.ended
        while !ended.value {
            do {
                try await firstOf(
                    { try await clock.waitForWakeUp(within: step) },
                    { try await ended.wait(for: "the task to end") { $0 } })
            } catch {
                task.cancel()
                throw error
            }
            if let next = clock.nextDeadline, next <= clock.now.addingTimeInterval(step.timeInterval) {
                await clock.advance(by: .seconds(max(0, next.timeIntervalSince(clock.now))))
            }
        }
        return try await task.value
    }
}
