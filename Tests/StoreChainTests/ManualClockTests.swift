import Foundation
import StoreChain
import StoreChainTesting
import Synchronization
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersWakeInDeadlineOrderWhenTimeIsAdvanced() async throws {
        let clock = ManualClock()
        let order = SharedLog()
        let start = clock.now
        let late = Task {
            try await clock.sleep(for: .seconds(10))
            order.append("late")
        }
        let early = Task {
            try await clock.sleep(for: .seconds(5))
            order.append("early")
        }
        try await clock.waitForSleepers(2)
        await clock.advance(by: .seconds(4))
        #expect(order.all.isEmpty)
        // Each deadline wakes its sleeper alone. (Two woken by one advance run side by side on
        // the pool, in no promised order: asserting one failed on a busy machine.)
        await clock.advance(by: .seconds(1))
        try await early.value
        #expect(order.all == ["early"])
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(5))
        try await late.value
        #expect(order.all == ["early", "late"])
        #expect(clock.now == start.addingTimeInterval(10))
    }

    @Test func oneAdvancePastSeveralDeadlinesWakesEverySleeper() async throws {
        let clock = ManualClock()
        let sleepers = (1...3).map { seconds in Task { try await clock.sleep(for: .seconds(seconds)) } }
        try await clock.waitForSleepers(3)
        await clock.advance(by: .seconds(3))
        for sleeper in sleepers { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func pastDeadlinesReturnAtOnceAndCancellationThrows() async throws {
        let clock = ManualClock()
        try await clock.sleep(until: clock.now.addingTimeInterval(-1))
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        try await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func deadlineInTheContextIsEnforced() throws {
        let clock = ManualClock()
        let context = RequestContext(clock: clock, deadline: clock.now.addingTimeInterval(1))
        try context.checkDeadline()
        let expired = RequestContext(clock: clock, deadline: clock.now)
        let error = #expect(throws: StoreChainError.self) { try expired.checkDeadline() }
        #expect(error?.code == .timedOut)
    }
}
