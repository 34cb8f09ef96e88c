import Foundation
import StoreChain
import StoreChainTesting
import Testing

@Suite struct RateLimitHandlerTests {
    let request = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))

    /// A terminal that records when each request reached it, and answers or throws.
    final class Timed: Sendable {
        private let recorded = Locked<[Date]>([])
        private let answer: @Sendable (Int) throws -> ResponseInfo
        private let clock: ManualClock

        init(_ clock: ManualClock, _ answer: @escaping @Sendable (Int) throws -> ResponseInfo) {
            self.clock = clock
            self.answer = answer
        }

        var terminal: RecordingResponder {
            RecordingResponder { _, _ in
                let index = self.recorded.withLock { times in
                    times.append(self.clock.now)
                    return times.count
                }
                return StoreResponse(.object(nil), info: try self.answer(index))
            }
        }

        var times: [Date] { recorded.withLock { $0 } }
    }

    static func timed(
        _ clock: ManualClock,
        _ answer: @escaping @Sendable (Int) throws -> ResponseInfo = { _ in
            ResponseInfo(answeredBy: "terminal", origin: .remote)
        }
    ) -> (RecordingResponder, Timed) {
        let timed = Timed(clock, answer)
        return (timed.terminal, timed)
    }

    @Test func neverExceedsTheRateUnder200ConcurrentCallers() async throws {
        // 8/s: slots 125 ms apart, exact in binary floating point, so the manual clock lands on them.
        let clock = ManualClock()
        let (terminal, times) = Self.timed(clock)
        let chain = Chain(
            handlers: [RateLimitHandler(options: .init(rate: 8, burst: 4))], terminal: terminal, clock: clock)
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 { group.addTask { _ = try await chain.send(request) } }
            try await clock.waitForSleepers(196)
            #expect(terminal.count() == 4, "the burst starts at once")
            for step in 1...196 {
                await clock.advance(by: .milliseconds(125))
                try await terminal.waitForRequests(4 + step)
            }
            try await group.waitForAll()
        }
        let started = times.times.map { $0.timeIntervalSince(start) }
        #expect(started.count == 200)
        for first in started {
            let inWindow = started.filter { $0 >= first && $0 < first + 1 }.count
            #expect(inWindow <= 4 + 8, "\(inWindow) requests in the second from \(first)s")
        }
        #expect(started.max() == 24.5, "and no slower than the rate allows")
    }

    @Test func limitsRequestsInFlight() async throws {
        let clock = ManualClock()
        let inFlight = Locked((now: 0, most: 0))
        let terminal = RecordingResponder { _, _ in
            inFlight.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            try await clock.sleep(for: .seconds(1))
            inFlight.withLock { $0.now -= 1 }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "terminal", origin: .remote))
        }
        let chain = Chain(
            handlers: [RateLimitHandler(options: .init(rate: 1_000, burst: 1_000, maxInFlight: 3))], terminal: terminal,
            clock: clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { _ = try await chain.send(request) } }
            for _ in 0..<4 {
                try await clock.waitForSleepers(1)
                await clock.advance(by: .seconds(1))
            }
            try await group.waitForAll()
        }
        #expect(inFlight.withLock { $0.most } == 3)
        #expect(terminal.count() == 10)
    }

    /// A change feed's long poll waits on the backend for as long as it likes: it holds no
    /// in-flight permit, so with `max-in-flight: 1` a fetch still passes while it waits.
    @Test func aLongPollHoldsNoInFlightPermit() async throws {
        let clock = ManualClock()
        let terminal = RecordingResponder { request, _ in
            if request.isLongPoll { try await clock.sleep(for: .seconds(25)) }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "terminal", origin: .remote))
        }
        let chain = Chain(
            handlers: [RateLimitHandler(options: .init(rate: 1_000, burst: 1_000, maxInFlight: 1))],
            terminal: terminal, clock: clock)
        async let poll = chain.send(.changes(ChangesRequest(cursor: "c1", wait: .seconds(25))))
        try await clock.waitForSleepers(1)
        async let fault = chain.send(request)
        try await terminal.waitForRequests(1, .objectFault)
        #expect(terminal.count(.objectFault) == 1, "the fault passed while the long poll waited")
        await clock.advance(by: .seconds(25))
        _ = try await (poll, fault)
    }

    /// Without `max-in-flight`, requests in flight are counted all the same: the inspector
    /// showed -13 and -151 after a paged query, since each was counted off but never on.
    @Test func requestsInFlightAreCountedWithoutAMaximum() async throws {
        let limiter = RateLimiter(options: .init(rate: 1_000, burst: 100))
        let seen = Locked<[Int]>([])
        let terminal = RecordingResponder(name: "terminal") { _, _ in
            seen.withLock { $0.append(limiter.snapshot(at: Date()).inFlight) }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "terminal", origin: .remote))
        }
        let chain = Chain(handlers: [RateLimitHandler(limiter: limiter)], terminal: terminal)
        for _ in 0..<3 { _ = try await chain.send(request) }
        #expect(seen.withLock { $0 } == [1, 1, 1], "one in flight while each is answered")
        #expect(limiter.snapshot(at: Date()).inFlight == 0)
    }

    @Test func retryAfterPausesEveryRequest() async throws {
        let clock = ManualClock()
        let (terminal, times) = Self.timed(clock) { index in
            guard index == 1 else { return ResponseInfo(answeredBy: "terminal", origin: .remote) }
            var error = StoreChainError(.rateLimited, "GET /bands answered 429")
            error.retryAfter = .seconds(30)
            throw error
        }
        let limiter = RateLimiter(options: .init(rate: 100, burst: 10))
        let chain = Chain(handlers: [RateLimitHandler(limiter: limiter)], terminal: terminal, clock: clock)
        await #expect(throws: StoreChainError.self) { try await chain.send(request) }
        let paused = limiter.snapshot(at: clock.now)
        #expect(paused.pausedUntil == clock.now.addingTimeInterval(30) && paused.available == 0)
        #expect(paused.nextStart == paused.pausedUntil, "what the inspector shows while paused")
        async let later = chain.send(request)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(29))
        #expect(terminal.count() == 1)
        #expect(limiter.snapshot(at: clock.now).waiting == 0, "waiting counts in-flight permits, not slots")
        await clock.advance(by: .seconds(1))
        _ = try await later
        #expect(times.times.last?.timeIntervalSince(times.times[0]) == 30)
    }

    @Test func slowsDownWhenTheBackendSaysFewRequestsRemain() async throws {
        let clock = ManualClock()
        let (terminal, times) = Self.timed(clock) { _ in
            var info = ResponseInfo(answeredBy: "terminal", origin: .remote)
            info.rateLimit = RateLimitStatus(remaining: 2, reset: .after(.seconds(20)))
            return info
        }
        let limiter = RateLimiter(options: .init(rate: 100, burst: 100))
        let chain = Chain(handlers: [RateLimitHandler(limiter: limiter)], terminal: terminal, clock: clock)
        _ = try await chain.send(request)
        let state = limiter.snapshot(at: clock.now)
        #expect(state.backendRemaining == 2 && state.backendReset == clock.now.addingTimeInterval(20))
        #expect(state.nextStart == clock.now.addingTimeInterval(10 - 0.99), "spaced, less the burst's tolerance")
        async let second = chain.send(request)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(10))
        _ = try await second
        #expect(times.times[1].timeIntervalSince(times.times[0]) == 10, "2 left for 20s: one every 10s")
    }

    @Test func failFastSaysWhenToRetry() async throws {
        let clock = ManualClock()
        let (terminal, _) = Self.timed(clock)
        let chain = Chain(
            handlers: [RateLimitHandler(options: .init(rate: 2, burst: 1, mode: .failFast))], terminal: terminal,
            clock: clock)
        _ = try await chain.send(request)
        let error = await #expect(throws: StoreChainError.self) { try await chain.send(request) }
        #expect(error?.code == .rateLimited)
        #expect(error?.retryAfter == .milliseconds(500))
        await clock.advance(by: .milliseconds(500))
        _ = try await chain.send(request)
        #expect(terminal.count() == 2)
    }

    @Test func waitingRespectsTheDeadlineAndCancellation() async throws {
        let clock = ManualClock()
        let (terminal, _) = Self.timed(clock)
        let chain = Chain(
            handlers: [RateLimitHandler(options: .init(rate: 1, burst: 1))], terminal: terminal, clock: clock)
        _ = try await chain.send(request)
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.send(request, context: chain.makeContext(deadline: clock.now.addingTimeInterval(0.5)))
        }
        #expect(error?.code == .rateLimited)
        let task = Task { try await chain.send(request) }
        try await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(terminal.count() == 1)
    }
}
