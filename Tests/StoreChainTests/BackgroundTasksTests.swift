import StoreChain
import StoreChainTesting
import Synchronization
import Testing

/// Timers among a chain's background work: they run when due, and shutdown does not wait
/// them out.
@Suite struct BackgroundTasksTests {
    @Test func aTimerRunsItsWorkWhenItsDelayHasPassed() async throws {
        let clock = ManualClock()
        let tasks = BackgroundTasks()
        let runs = Atomic<Int>(0)
        #expect(tasks.run(after: .seconds(30), clock: clock) { runs.add(1, ordering: .relaxed) })
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(29))
        #expect(runs.load(ordering: .relaxed) == 0)
        await clock.advance(by: .seconds(1))
        await tasks.shutdown()
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test func shutdownCancelsATimerStillWaitingAndWaitsForWorkThatRuns() async throws {
        let clock = ManualClock()
        let tasks = BackgroundTasks()
        let runs = Atomic<Int>(0)
        tasks.run(after: .seconds(3600), clock: clock) { runs.add(1, ordering: .relaxed) }
        tasks.run {
            try? await clock.sleep(for: .seconds(1))
            runs.add(10, ordering: .relaxed)
        }
        try await clock.waitForSleepers(2)
        let shutdown = Task { await tasks.shutdown() }
        // The plain task is waited for: it finishes only once its second has passed.
        try await clock.waitForSleepers(atMost: 1)
        await clock.advance(by: .seconds(1))
        await shutdown.value
        #expect(runs.load(ordering: .relaxed) == 10, "the timer's work never runs")
        #expect(tasks.count == 0)
        #expect(!tasks.run(after: .seconds(1), clock: clock) {})
    }
}
