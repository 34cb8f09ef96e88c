import StoreChainTesting
import Testing

@testable import StoreChain

/// `Watched`, what the tests wait on instead of polling: a change wakes the waiters whose
/// condition it makes true, and a wait that never ends says what it waited for.
@Suite struct WatchedTests {
    @Test func aWaitEndsWithTheChangeThatMakesItsConditionTrue() async throws {
        let count = Watched(0)
        let waiting = Task { try await count.wait(for: "three") { $0 >= 3 } }
        count.withLock { $0 += 1 }
        count.withLock { $0 += 2 }
        try await waiting.value
        #expect(count.value == 3)
        try await count.wait(for: "three, already") { $0 == 3 }
    }

    @Test func aWaitThatNeverHoldsFailsNamingWhatItWaitedForAndTheValue() async throws {
        let count = Watched(1)
        let error = await #expect(throws: StoreChainError.self) {
            try await count.wait(for: "two sleepers", timeout: .milliseconds(20)) { $0 == 2 }
        }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("two sleepers") == true, "\(String(describing: error))")
        #expect(error?.message.contains("the value then: 1") == true, "\(String(describing: error))")
    }

    @Test func aCancelledWaitStopsAtOnce() async throws {
        let flag = Watched(false)
        let waiting = Task { try await flag.wait(for: "the flag") { $0 } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func firstOfEndsWithTheFirstWaitAndCancelsTheOther() async throws {
        let (first, second) = (Watched(false), Watched(false))
        let waiting = Task {
            try await firstOf(
                { try await first.wait(for: "the first flag") { $0 } },
                { try await second.wait(for: "the second flag") { $0 } })
        }
        second.withLock { $0 = true }
        try await waiting.value
        #expect(!first.value)
    }
}
