import Foundation
import StoreChain

/// A clock that moves only when a test says so. Sleepers wake when `advance(by:)` passes their
/// deadline, in deadline order; no test ever waits on real time.
///
/// ```swift
/// let clock = ManualClock()
/// async let waited: Void = clock.sleep(for: .seconds(5))
/// await clock.advance(by: .seconds(5))
/// try await waited
/// ```
public final class ManualClock: StoreClock {
    private struct Sleeper {
        let id: Int
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: CustomStringConvertible {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextID = 0

        var description: String {
            let waits = sleepers.map { "\($0.deadline.timeIntervalSince(now))s" }
            return "\(sleepers.count) sleeping, due in [\(waits.joined(separator: ", "))]"
        }
    }

    private let state: Watched<State>

    /// A clock standing at `now` (a fixed date by default, so tests print the same times).
    public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Watched(State(now: now))
    }

    /// The time the clock stands at.
    public var now: Date {
        state.withLock { $0.now }
    }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// When the first sleeper wakes, if a task sleeps on this clock.
    public var nextDeadline: Date? {
        state.withLock { $0.sleepers.map(\.deadline).min() }
    }

    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time forward, waking every sleeper whose deadline is reached, and gives the woken
    /// tasks a chance to run.
    public func advance(by duration: Duration) async {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(duration.timeInterval)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in woken { sleeper.continuation.resume() }
        for _ in 0..<10 { await Task.yield() }
    }

    /// Waits until at least `count` tasks sleep on this clock, woken by the sleep that makes them
    /// `count` (no polling). Fails with a `timedOut` error saying how many slept after a minute
    /// of real time, so that a test whose task never sleeps fails instead of hanging.
    public func waitForSleepers(_ count: Int) async throws {
        try await state.wait(for: "\(count) tasks sleeping on the manual clock") { $0.sleepers.count >= count }
    }

    /// Waits until a task sleeps on this clock with a deadline no further than `step` from now,
    /// as `waitForSleepers(_:)` does.
    public func waitForWakeUp(within step: Duration) async throws {
        try await state.wait(for: "a task sleeping on the manual clock until at most \(step) from now") { state in
            state.sleepers.contains { $0.deadline <= state.now.addingTimeInterval(step.timeInterval) }
        }
    }

    /// Waits until at most `count` tasks sleep on this clock (the others were woken or
    /// cancelled), as `waitForSleepers(_:)` does.
    public func waitForSleepers(atMost count: Int) async throws {
        try await state.wait(for: "at most \(count) tasks sleeping on the manual clock") { $0.sleepers.count <= count }
    }
}
